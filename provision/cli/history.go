package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

// historyArgs are history's.
type historyArgs struct {
	view viewArgs
	run  runArgs
}

func (a *historyArgs) register(fs flags) {
	a.view.register(fs, false, "print the history as JSON: {format_version, project, kept, applied: [{commit, change, digest, job, at}]}")
	a.run.vars.register(fs)
	a.run.net.register(fs, time.Minute)
}

func (c *cli) history(args []string) int {
	var a historyArgs
	pos, code, ok := c.args("history", &a, args, 1, &jsonView{o: c.output})
	if !ok {
		return code
	}
	var v run.View = c.textView(a.view.noColor)
	if a.view.json {
		v = &jsonView{o: c.output}
	}
	ctx, cancel := a.run.net.bound(context.Background())
	defer cancel()
	r := c.operation(run.History, dirArg(pos), &a.run).Start(ctx, v)
	if r.Failed() {
		return exitError
	}
	kept := r.Opened.Cluster != nil
	if a.view.json {
		(&jsonView{o: c.output}).write(struct {
			FormatVersion string          `json:"format_version"`
			Project       string          `json:"project"`
			Kept          bool            `json:"kept"`
			Applied       []plans.Applied `json:"applied"`
		}{plans.FormatVersion, r.Config.Project, kept, append([]plans.Applied{}, r.History...)})
		return exitOK
	}
	if !kept {
		fmt.Fprintf(c.stdout, "Project %q keeps no history: no Consul agent holds its lock (a consul or agent block, or CONSUL_HTTP_ADDR).\n", r.Config.Project)
		return exitOK
	}
	if len(r.History) == 0 {
		fmt.Fprintf(c.stdout, "Project %q has no history: no apply -record has completed.\n", r.Config.Project)
		return exitOK
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "APPLIED\tCOMMIT\tCHANGE\tDIGEST\tJOB")
	for _, e := range r.History {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", e.At.Format(time.RFC3339), short(e.Commit), orDash(e.Change), short(e.Digest), orDash(e.Job))
	}
	w.Flush()
	return exitOK
}

// short is a commit or a digest as people quote them: its first 12
// characters.
func short(s string) string { return orDash(s[:min(len(s), 12)]) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// readRecord reads apply -record's file: one entry of the history, or an
// array of them, each with its commit; any other field is refused, so
// that a typo is not recorded as nothing.
func readRecord(path string) ([]plans.Applied, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		b = append(append([]byte{'['}, b...), ']')
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var entries []plans.Applied
	if err := d.Decode(&entries); err != nil {
		return nil, fmt.Errorf("%s: not a JSON entry or array of entries {commit, change, digest, job}: %w", path, err)
	}
	if len(entries) == 0 {
		return nil, errors.New(path + ": no entry")
	}
	for i, e := range entries {
		if e.Commit == "" {
			return nil, fmt.Errorf("%s: entry %d has no commit", path, i+1)
		}
		if !e.At.IsZero() {
			return nil, fmt.Errorf("%s: entry %d sets at, which is the time the apply completes", path, i+1)
		}
	}
	return entries, nil
}
