package cli

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/template"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/schema"
)

// completion prints a shell's completion script (commands, each command's
// flags, and for -target, -exclude and -replace the addresses the specs
// declare), or with -addresses those addresses, read offline, one a line.
func (c *cli) completion(args []string) int {
	var a completionArgs
	pos, code, ok := c.args("completion", &a, args, 1, nil)
	if !ok {
		return code
	}
	if a.addresses {
		// Best effort, as completion is: specs that do not load (a
		// required variable, an error being typed) complete nothing.
		cfg, _ := schema.NewParser(c.Language).LoadDir(dirArg(pos), schema.Inputs{Env: c.environ()})
		if cfg != nil {
			for _, d := range cfg.Declared() {
				fmt.Fprintln(c.stdout, addrs.Addr{Module: d.Module, In: d.In, Kind: d.Kind, Name: d.Name})
			}
		}
		return exitOK
	}
	if len(pos) != 1 || scripts[pos[0]] == nil {
		fmt.Fprintf(c.stderr, "provision completion: name a shell: bash, zsh or fish\n\n")
		c.usage("completion", &a)
		return exitError
	}
	var flags = map[string][]string{}
	var names []string
	for _, cmd := range commands {
		names = append(names, cmd.name)
		if cmd.name != "completion" { // its argument is a shell: the scripts say so
			flags[cmd.name] = c.flagsOf(cmd.name)
		}
	}
	if err := scripts[pos[0]].Execute(c.stdout, map[string]any{"Commands": names, "Flags": flags, "AddressFlagsList": []string{"-target", "-exclude", "-replace"}}); err != nil {
		fmt.Fprintf(c.stderr, "provision completion: %v\n", err)
		return exitError
	}
	return exitOK
}

var helpFlag = regexp.MustCompile(`(?m)^  (-[a-z][a-z-]*)`)

// flagsOf lists a command's flags, "-name", as its -help prints them:
// the flags are declared where each command parses them, so asking is the
// one way that cannot drift.
func (c *cli) flagsOf(name string) []string {
	var help bytes.Buffer
	newCLI(c.Options, nil, &help, io.Discard).run([]string{name, "-help"})
	var out []string
	for _, m := range helpFlag.FindAllStringSubmatch(help.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

var scriptFuncs = template.FuncMap{"join": strings.Join}

// scripts are the completion scripts: bash's, zsh's (bash's, through
// zsh's bashcompinit) and fish's. An address holds quotes and brackets
// (index[".dashboard"]), so bash quotes each candidate itself instead of
// letting compgen remove them.
var scripts = map[string]*template.Template{
	"bash": template.Must(template.New("bash").Funcs(scriptFuncs).Parse(bashScript)),
	"zsh": template.Must(template.New("zsh").Funcs(scriptFuncs).Parse("# provision completion for zsh: source <(provision completion zsh)\n" +
		"(( $+functions[compdef] )) || { autoload -U +X compinit && compinit }\nautoload -U +X bashcompinit && bashcompinit\n" + bashScript)),
	"fish": template.Must(template.New("fish").Funcs(scriptFuncs).Parse(fishScript)),
}

const bashScript = `# provision completion for bash: source <(provision completion bash)
_provision() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]} flags="" dir=specs w a q
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "{{join .Commands " "}}" -- "$cur"))
    return
  fi
  case "$prev" in
    {{join .AddressFlagsList "|"}})
      for w in "${COMP_WORDS[@]:2}"; do [ -d "$w" ] && dir=$w; done
      # Quoted here, so readline must not quote them again as file names.
      compopt +o filenames 2>/dev/null
      COMPREPLY=()
      while IFS= read -r a; do
        q=$(printf '%q' "$a")
        [[ $q == "$cur"* || $a == "$cur"* ]] && COMPREPLY+=("$q")
      done < <(provision completion -addresses "$dir" 2>/dev/null)
      return 0
      ;;
  esac
  case "$cmd" in
{{- range $name, $f := .Flags}}
    {{$name}}) flags="{{join $f " "}}" ;;
{{- end}}
    completion) flags="-addresses"; [[ $cur != -* ]] && { COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")); return; } ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _provision provision
`

const fishScript = `# provision completion for fish: provision completion fish | source
complete -c provision -f
complete -c provision -n __fish_use_subcommand -a "{{join .Commands " "}}"
{{- range $name, $f := .Flags}}{{range $f}}
complete -c provision -n "__fish_seen_subcommand_from {{$name}}" -o {{slice . 1}}
{{- end}}{{end}}
complete -c provision -n "__fish_seen_subcommand_from completion" -a "bash zsh fish"
{{- range .AddressFlagsList}}
complete -c provision -o {{slice . 1}} -x -a "(provision completion -addresses (__fish_first_dir_arg) 2>/dev/null)"
{{- end}}
function __fish_first_dir_arg
  for w in (commandline -opc)[3..-1]
    if test -d $w
      echo $w
      return
    end
  end
  echo specs
end
`
