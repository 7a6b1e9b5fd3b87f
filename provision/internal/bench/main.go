// Command bench is what "make bench" runs after the Go micro-benchmarks:
// the whole provision binary against real servers (a Consul agent and an
// Elasticsearch 2.4.1 cluster started on loopback), on generated specs of
// N services and M indices. Each job is timed with the peak RSS of the
// process and the requests it made, next to a floor measured in the same
// run by the same harness (parsing the same specs with hcl alone; one GET
// and decode of the agent; a plain Go PUT loop at the same parallelism),
// and printed as one table, also written as JSON (-json FILE). The fleet
// rows spread the same services over the client agents of a real cluster
// (-agents, 10 by default, or as many as start on the machine) and set
// the converged plan beside the one-agent plan of the same run.
//
//	go run ./provision/internal/bench -services 1000,10000 -indices 10,100 -agents 10
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/provision-dev/provision/provision/servers"
)

// row is one line of the table.
type row struct {
	Job      string  `json:"job"`
	N        int     `json:"n"`
	Seconds  float64 `json:"seconds"`
	PeakMB   float64 `json:"peak_rss_mb,omitempty"`
	Floor    string  `json:"floor,omitempty"`
	FloorSec float64 `json:"floor_seconds,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	Exit     int     `json:"exit"`
}

func main() {
	services := flag.String("services", "1000", "comma-separated numbers of services")
	indices := flag.String("indices", "10", "comma-separated numbers of indices")
	jsonOut := flag.String("json", "bench.json", "write the rows as JSON to `FILE`")
	bin := flag.String("provision", "bin/provision", "the provision binary to measure")
	agents := flag.Int("agents", 10, "client agents of the cluster the fleet rows spread the services over (0: no fleet rows)")
	flag.Parse()
	if err := run(*bin, ints(*services), ints(*indices), *agents, *jsonOut); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func run(bin string, services, indices []int, agents int, jsonOut string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "provision-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var logs servers.LogBuffer
	agent, err := servers.StartConsul(ctx, dir, &logs)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, logs.Tail(2000))
	}
	defer agent.Stop()
	es, err := servers.StartCluster(ctx, dir, "t1", &logs)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, logs.Tail(2000))
	}
	defer es.Stop()
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")

	var rows []row
	for _, n := range services {
		specs := filepath.Join(dir, fmt.Sprintf("svc-%d", n))
		if err := writeServices(specs, n); err != nil {
			return err
		}
		parse := parseFloor(specs)
		read := readFloor(agent.Addr, "services") + readFloor(agent.Addr, "checks")
		put := putFloor(agent.Addr, n)
		cmd := func(job string, floorName string, floor float64, args ...string) {
			r := measure(bin, env, args...)
			r.Job, r.N = job, n
			if floor > 0 {
				r.Floor, r.FloorSec, r.Ratio = floorName, floor, r.Seconds/floor
			}
			rows = append(rows, r)
		}
		cmd("validate", "hcl parse", parse, "validate", specs)
		cmd("create (apply)", "PUT loop, parallelism 10", put, "apply", "-auto-approve", "-lock=false", specs)
		cmd("converged plan", "hcl parse + GET and decode", parse+read, "plan", "-detailed-exitcode", specs)
		cmd("plan -json", "hcl parse + GET and decode", parse+read, "plan", "-json", specs)
		cmd("converged apply", "", 0, "apply", "-auto-approve", "-lock=false", specs)
		cmd("update all (apply)", "PUT loop, parallelism 10", put, "apply", "-auto-approve", "-lock=false", "-var", "port_base=20000", specs)
		cmd("destroy", "", 0, "destroy", "-auto-approve", "-lock=false", specs)
	}
	if agents > 0 {
		fleet, err := fleetRows(ctx, bin, env, dir, agent, agents, services, rows)
		if err != nil {
			return err
		}
		rows = append(rows, fleet...)
	}
	for _, m := range indices {
		specs := filepath.Join(dir, fmt.Sprintf("ix-%d", m))
		if err := writeIndices(specs, m, es.URL); err != nil {
			return err
		}
		parse := parseFloor(specs)
		for _, job := range []struct {
			name string
			args []string
		}{
			{"indices: create (apply)", []string{"apply", "-auto-approve", "-lock=false", specs}},
			{"indices: converged plan", []string{"plan", "-detailed-exitcode", specs}},
			{"indices: destroy -indices", []string{"destroy", "-auto-approve", "-lock=false", "-indices", specs}},
		} {
			r := measure(bin, env, job.args...)
			r.Job, r.N = job.name, m
			if job.name == "indices: converged plan" {
				r.Floor, r.FloorSec, r.Ratio = "hcl parse", parse, r.Seconds/parse
			}
			rows = append(rows, r)
		}
	}
	fmt.Printf("%-26s %7s %9s %9s %6s  %-28s %9s %7s\n", "job", "n", "seconds", "peak MB", "exit", "floor", "seconds", "ratio")
	for _, r := range rows {
		fmt.Printf("%-26s %7d %9.3f %9.1f %6d  %-28s %9.3f %7.2f\n", r.Job, r.N, r.Seconds, r.PeakMB, r.Exit, r.Floor, r.FloorSec, r.Ratio)
	}
	b, _ := json.MarshalIndent(rows, "", "  ")
	return os.WriteFile(jsonOut, append(b, '\n'), 0o644)
}

// measure runs the binary and returns its wall time, peak RSS and exit
// code. The peak is the process's VmHWM, polled every 5 ms: wait4's
// ru_maxrss would count the forking harness too.
func measure(bin string, env []string, args ...string) row {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return row{Exit: -1}
	}
	var peak float64
	done := make(chan struct{})
	go func() {
		for {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
						peak = max(peak, kb/1024)
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	return row{Seconds: time.Since(start).Seconds(), Exit: cmd.ProcessState.ExitCode(), PeakMB: peak}
}

func writeServices(dir string, n int) error {
	var b bytes.Buffer
	b.WriteString("project = \"bench\"\n\nvariable \"port_base\" {\n  type    = number\n  default = 10000\n}\n")
	for i := range n {
		fmt.Fprintf(&b, `
service "svc-%d" {
  address = "127.0.0.1"
  port    = var.port_base + %d
  frontend {
    rule = "PathPrefix:/svc-%d"
    forward_auth {
      address               = "http://127.0.0.1:8080/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }
}
`, i, i%50000, i)
	}
	return writeSpec(dir, b.Bytes())
}

func writeIndices(dir string, m int, url string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "project = \"bench\"\n\nsearch \"t1\" {\n  url          = %q\n  cluster_name = \"t1\"\n}\n", url)
	for i := range m {
		fmt.Fprintf(&b, "\nindex \"bench-%d\" {\n  search = \"t1\"\n  mapping \"doc\" {\n    properties = { title = \"string\", hits = \"integer\" }\n  }\n}\n", i)
	}
	return writeSpec(dir, b.Bytes())
}

func writeSpec(dir string, src []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "main.hcl"), src, 0o644)
}

// fleetRows starts k client agents joined to the server agent (fewer if
// the machine cannot start more, as said on stderr), and for each n
// creates n services spread over them, plans them converged and destroys
// them. The converged plan is set beside its floor (hcl parse + every
// agent's two GETs, side by side) and beside the one-agent plan of rows.
func fleetRows(ctx context.Context, bin string, env []string, dir string, server *servers.Consul, k int, services []int, rows []row) ([]row, error) {
	var clients []*servers.Consul
	var logs servers.LogBuffer
	for i := range k {
		c, err := server.StartClient(ctx, dir, fmt.Sprintf("node-%d", i), &logs)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %d client agents started, not %d: %v\n", len(clients), k, err)
			break
		}
		defer c.Stop()
		clients = append(clients, c)
	}
	if len(clients) == 0 {
		return nil, fmt.Errorf("no client agent started\n%s", logs.Tail(2000))
	}
	fmt.Fprintf(os.Stderr, "bench: fleet rows over %d client agents of one cluster\n", len(clients))
	var out []row
	for _, n := range services {
		specs := filepath.Join(dir, fmt.Sprintf("fleet-%d", n))
		if err := writeFleet(specs, n, clients); err != nil {
			return nil, err
		}
		parse := parseFloor(specs)
		add := func(job, floorName string, floor float64, args ...string) {
			r := measure(bin, env, args...)
			r.Job, r.N = fmt.Sprintf("fleet of %d: %s", len(clients), job), n
			if floor > 0 {
				r.Floor, r.FloorSec, r.Ratio = floorName, floor, r.Seconds/floor
			}
			out = append(out, r)
		}
		add("create", "", 0, "apply", "-auto-approve", "-lock=false", specs)
		reads := time.Now()
		var wg sync.WaitGroup
		for _, c := range clients {
			wg.Add(1)
			go func() { defer wg.Done(); readFloor(c.Addr, "services"); readFloor(c.Addr, "checks") }()
		}
		wg.Wait()
		add("converged plan", "hcl parse + GETs side by side", parse+time.Since(reads).Seconds(), "plan", "-detailed-exitcode", specs)
		for _, r := range rows {
			if r.Job == "converged plan" && r.N == n {
				add("converged plan", "converged plan, one agent", r.Seconds, "plan", "-detailed-exitcode", specs)
			}
		}
		add("destroy", "", 0, "destroy", "-auto-approve", "-lock=false", specs)
	}
	return out, nil
}

// writeFleet writes n services spread round-robin over the agents.
func writeFleet(dir string, n int, agents []*servers.Consul) error {
	var b bytes.Buffer
	b.WriteString("project = \"bench\"\n")
	for i, a := range agents {
		fmt.Fprintf(&b, "\nagent \"node-%d\" {\n  address = %q\n}\n", i, a.Addr)
	}
	for i := range n {
		fmt.Fprintf(&b, "\nservice \"svc-%d\" {\n  agent   = \"node-%d\"\n  address = \"127.0.0.1\"\n  port    = %d\n  frontend {\n    rule = \"PathPrefix:/svc-%d\"\n  }\n}\n",
			i, i%len(agents), 10000+i%50000, i)
	}
	return writeSpec(dir, b.Bytes())
}

// parseFloor is the time hcl alone takes to parse the specs.
func parseFloor(dir string) float64 {
	start := time.Now()
	_, _ = hclparse.NewParser().ParseHCLFile(filepath.Join(dir, "main.hcl"))
	return time.Since(start).Seconds()
}

// readFloor is one GET /v1/agent/<what> and its decoding.
func readFloor(addr, what string) float64 {
	start := time.Now()
	resp, err := http.Get("http://" + addr + "/v1/agent/" + what)
	if err == nil {
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
	}
	return time.Since(start).Seconds()
}

// putFloor registers n bare services with a plain PUT loop at parallelism
// 10, then deregisters them (not timed).
func putFloor(addr string, n int) float64 {
	do := func(method, path, body string) {
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	each := func(f func(i int)) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 10)
		for i := range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() { defer func() { <-sem; wg.Done() }(); f(i) }()
		}
		wg.Wait()
	}
	start := time.Now()
	each(func(i int) {
		do("PUT", "/v1/agent/service/register", fmt.Sprintf(`{"ID":"floor-%d","Name":"floor-%d","Port":%d}`, i, i, 10000+i%50000))
	})
	took := time.Since(start).Seconds()
	each(func(i int) { do("PUT", fmt.Sprintf("/v1/agent/service/deregister/floor-%d", i), "") })
	return took
}
