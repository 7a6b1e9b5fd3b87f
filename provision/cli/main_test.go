package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/servers"
	"github.com/rogpeppe/go-internal/testscript"
)

// testOptions are the CLI's options in its tests: the language of every
// kind and place, as the provision binary's main hands over its own.
var testOptions = Options{Language: langtest.Language, PolicyKinds: connect.PolicyKinds()}

// testCLI is the CLI of the provision binary, on the streams given.
func testCLI(stdin io.Reader, stdout, stderr io.Writer) *cli {
	return newCLI(testOptions, stdin, stdout, stderr)
}

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"provision": func() { os.Exit(Run(testOptions, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts of testdata/scripts against one real
// Consul agent. Each script uses its own project and service IDs.
func TestScripts(t *testing.T) {
	agent := servers.NewConsul(t)
	testscript.Run(t, testscript.Params{
		Dir: "../../testdata/scripts",
		Setup: func(env *testscript.Env) error {
			env.Setenv("CONSUL_HTTP_ADDR", agent.Addr)
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"consul": consulCmd,
		},
	})
}

// consulCmd talks to the agent around provision, as a person would with
// curl: consul register FILE, consul deregister ID, consul get ID (prints
// ID, port and tags, one per line, or "absent"); consul kvput KEY VALUE
// [FLAGS], consul kvdelete KEY, consul kvget KEY (prints the value and
// the flags, or "absent").
func consulCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) > 1 && strings.HasPrefix(args[0], "kv") {
		kvCmd(ts, neg, args)
		return
	}
	if len(args) != 2 {
		ts.Fatalf("usage: consul register FILE | deregister ID | get ID | kvput KEY VALUE [FLAGS] | kvdelete KEY | kvget KEY")
	}
	base := "http://" + ts.Getenv("CONSUL_HTTP_ADDR")
	var (
		resp *http.Response
		err  error
	)
	switch args[0] {
	case "register":
		req, _ := http.NewRequest("PUT", base+"/v1/agent/service/register", strings.NewReader(ts.ReadFile(args[1])))
		resp, err = http.DefaultClient.Do(req)
	case "deregister":
		req, _ := http.NewRequest("PUT", base+"/v1/agent/service/deregister/"+args[1], nil)
		resp, err = http.DefaultClient.Do(req)
	case "get":
		resp, err = http.Get(base + "/v1/agent/service/" + args[1])
	default:
		ts.Fatalf("unknown consul command %q", args[0])
	}
	ts.Check(err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if args[0] == "get" {
		if resp.StatusCode == http.StatusNotFound {
			fmt.Fprintln(ts.Stdout(), "absent")
			return
		}
		var s struct {
			ID   string
			Port int
			Tags []string
			Meta map[string]string
		}
		ts.Check(json.NewDecoder(bytes.NewReader(body)).Decode(&s))
		fmt.Fprintf(ts.Stdout(), "id %s\nport %d\nowner %s\n", s.ID, s.Port, s.Meta["provision-project"])
		for _, tag := range s.Tags {
			fmt.Fprintf(ts.Stdout(), "tag %s\n", tag)
		}
		return
	}
	if (resp.StatusCode != http.StatusOK) != neg {
		ts.Fatalf("consul %s: %s %s", args[0], resp.Status, body)
	}
}

func kvCmd(ts *testscript.TestScript, neg bool, args []string) {
	base := "http://" + ts.Getenv("CONSUL_HTTP_ADDR") + "/v1/kv/" + args[1]
	var resp *http.Response
	var err error
	switch {
	case args[0] == "kvput" && (len(args) == 3 || len(args) == 4):
		flags := "0"
		if len(args) == 4 {
			flags = args[3]
		}
		req, _ := http.NewRequest("PUT", base+"?flags="+flags, strings.NewReader(args[2]))
		resp, err = http.DefaultClient.Do(req)
	case args[0] == "kvdelete" && len(args) == 2:
		req, _ := http.NewRequest("DELETE", base, nil)
		resp, err = http.DefaultClient.Do(req)
	case args[0] == "kvget" && len(args) == 2:
		resp, err = http.Get(base)
	default:
		ts.Fatalf("usage: consul kvput KEY VALUE [FLAGS] | kvdelete KEY | kvget KEY")
	}
	ts.Check(err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if args[0] == "kvget" {
		if resp.StatusCode == http.StatusNotFound {
			fmt.Fprintln(ts.Stdout(), "absent")
			return
		}
		var pairs []struct {
			Value []byte
			Flags uint64
		}
		ts.Check(json.Unmarshal(body, &pairs))
		fmt.Fprintf(ts.Stdout(), "value %s\nflags %d\n", pairs[0].Value, pairs[0].Flags)
		return
	}
	if (resp.StatusCode != http.StatusOK) != neg {
		ts.Fatalf("consul %s: %s %s", args[0], resp.Status, body)
	}
}
