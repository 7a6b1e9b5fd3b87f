package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// build is what provision version says of the binary: the module version
// and the VCS revision come from the build information the go command
// embeds in every binary (runtime/debug.ReadBuildInfo), so that a binary
// from go install module@v1.2.3, one from make release and one from a
// clone each say what they are without a flag at build time. A version
// stamped with -ldflags -X main.version (make build, make release), which
// main hands over as Options.Version, wins over the module's, which a
// build inside a clone leaves "(devel)".
type build struct {
	Version  string `json:"version"`
	Module   string `json:"module"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"revision_time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
}

// readBuild reads the running binary's build information; version is
// its release, or "dev".
func readBuild(version string) build {
	b := build{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = info.Main.Path
	if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// write prints b as text or, with asJSON, as one JSON object.
func (b build) write(w io.Writer, asJSON bool) {
	if asJSON {
		out, _ := json.MarshalIndent(b, "", "  ")
		fmt.Fprintf(w, "%s\n", out)
		return
	}
	fmt.Fprintf(w, "provision %s\n", b.Version)
	if b.Module != "" {
		fmt.Fprintf(w, "module %s\n", b.Module)
	}
	fmt.Fprintf(w, "built with %s for %s\n", b.Go, b.Platform)
	if b.Revision != "" {
		rev := b.Revision
		if b.Time != "" {
			rev += " (" + b.Time + ")"
		}
		if b.Modified {
			rev += ", with uncommitted changes"
		}
		fmt.Fprintf(w, "revision %s\n", rev)
	}
}

func (c *cli) version(args []string) int {
	var a versionArgs
	if _, code, ok := c.args("version", &a, args, 0, nil); !ok {
		return code
	}
	readBuild(c.Version).write(c.stdout, a.view.json)
	return exitOK
}
