package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/servers"
)

// BenchmarkStepManyProjects: the pipeline step's plan job on one
// repository of 10 projects of 1,000 gated services each (PROVISION_DIR
// a glob), against a real Consul agent as GitHub runs the step (its
// comments, in parts, on the local API), beside the same step run for
// each project alone (a job of one project, on a pull request of its
// own), in the same iteration: a job of many projects should cost what
// its projects cost alone (step/alone). The ten plans of provision alone
// (plan -out, what the step runs for each) are the floor (plans-s).
func BenchmarkStepManyProjects(b *testing.B) {
	const projects, services = 10, 1000
	agent := servers.NewConsul(b)
	p := newPipeline(b, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "CONSUL_HTTP_ADDR="+agent.Addr)
	os.RemoveAll(filepath.Join(p.work, "specs"))
	os.MkdirAll(filepath.Join(p.work, ".git"), 0o755)
	var dirs []string
	for i := range projects {
		dir := fmt.Sprintf("teams/t%02d/specs", i)
		dirs = append(dirs, dir)
		var s strings.Builder
		fmt.Fprintf(&s, "project = \"t%02d\"\n", i)
		for j := range services {
			fmt.Fprintf(&s, "\nservice \"t%02d-svc-%d\" {\n  address = \"127.0.0.1\"\n  port    = %d\n  frontend {\n    rule = \"PathPrefix:/t%02d/svc-%d\"\n    forward_auth {\n      address = \"http://127.0.0.1:8080/auth\"\n    }\n  }\n}\n", i, j, 10000+i*services+j, i, j)
		}
		os.MkdirAll(filepath.Join(p.work, dir), 0o755)
		if err := os.WriteFile(filepath.Join(p.work, dir, "main.hcl"), []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	bin := filepath.Join(provisionBin(b), "provision")
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	step := func(n int, dirs string) {
		if out, err := p.run("plan", p.pullRequest(n, fmt.Sprintf("head%d", n), "acme/specs"), "PROVISION_DIR="+dirs); err != nil {
			b.Fatalf("the step's plan of %s: %v\n%s", dirs, err, out)
		}
	}
	var all, alone, plans time.Duration
	b.ResetTimer()
	for range b.N {
		all += timed(func() { step(1, "teams/*/specs") })
		for i, dir := range dirs {
			alone += timed(func() { step(100+i, dir) })
		}
		plans += timed(func() {
			for i, dir := range dirs {
				cmd := exec.Command(bin, "plan", "-detailed-exitcode", "-no-color", fmt.Sprintf("-out=%s/alone-%d.plan", p.dir, i), dir)
				cmd.Dir, cmd.Env = p.work, p.env
				if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(err.Error(), "exit status 2") {
					b.Fatalf("plan %s: %v\n%s", dir, err, out)
				}
			}
		})
	}
	b.ReportMetric(all.Seconds()/float64(b.N), "step-s")
	b.ReportMetric(alone.Seconds()/float64(b.N), "alone-s")
	b.ReportMetric(all.Seconds()/alone.Seconds(), "step/alone")
	b.ReportMetric(plans.Seconds()/float64(b.N), "plans-s")
	if got, want := len(p.api.posted(1)), len(p.api.posted(100))*projects; got != want {
		b.Errorf("%d comments on the pull request of all projects, want %d: as many as the projects' own", got, want)
	}
}
