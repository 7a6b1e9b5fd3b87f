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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/parallel"
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
	// With -base, the base binary's median (BaseSec) and the median of
	// the pairs' ratios A/B with their spread (each pair: A then B).
	BaseSec    float64 `json:"base_seconds,omitempty"`
	BasePeakMB float64 `json:"base_peak_rss_mb,omitempty"`
	AB         float64 `json:"ab,omitempty"`
	ABMin      float64 `json:"ab_min,omitempty"`
	ABMax      float64 `json:"ab_max,omitempty"`
	// Requests counts the requests the job made, per backend, at the
	// wire ("agents" sums the client agents of the fleet rows); writes
	// are counted apart ("consul writes").
	Requests map[string]int `json:"requests,omitempty"`
}

// counter is a reverse proxy in front of a server that counts requests,
// so that each row says how many the job made. The floors go through the
// same proxies, so that ratios compare like with like.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

// front starts a counting proxy for the server at base (http://host:port)
// and returns its host:port; its requests count under label.
func (c *counter) front(base, label string) string {
	target, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{MaxIdleConnsPerHost: 100}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := label
		if r.Method != http.MethodGet {
			key += " writes"
		}
		c.mu.Lock()
		c.n[key]++
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	return strings.TrimPrefix(srv.URL, "http://")
}

// take returns the counts since the last take.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

var wire = &counter{n: map[string]int{}}

func main() {
	services := flag.String("services", "1000", "comma-separated numbers of services")
	indices := flag.String("indices", "10", "comma-separated numbers of indices")
	jsonOut := flag.String("json", "bench.json", "write the rows as JSON to `FILE`")
	bin := flag.String("provision", "bin/provision", "the provision binary to measure")
	agents := flag.Int("agents", 10, "client agents of the cluster the fleet rows spread the services over (0: no fleet rows)")
	fleet := flag.String("fleet", "", "comma-separated numbers of services of the fleet rows alone, spread over the -agents (an organisation's estate: 10000 over 20 agents, never one agent holding them); default: the registered -services")
	documents := flag.String("documents", "1000", "comma-separated numbers of documents (saved objects)")
	flag.StringVar(&baseBin, "base", "", "a provision binary of an earlier revision (make bench builds BENCH_BASE's): each plan and validate job then runs in pairs, this binary then that one, and the table gives the median A/B with its spread, marked * over 1.05")
	flag.IntVar(&pairs, "pairs", 10, "with -base, the pairs each job runs")
	plain := flag.Bool("plain", false, "services without weights and tagged_addresses, for a -base revision that does not take them")
	flag.IntVar(&synthesizeAbove, "synthesize-above", 30000, "services above this number are not registered: their rows (validate, plan -snapshot) plan from a live state synthesized from the largest real snapshot, so that a row at 100,000 needs no hour of registrations")
	flag.StringVar(&keep, "keep", "", "generate the specs and snapshots in `DIR` and keep them there (for profiling by hand); by default a temporary directory, removed at the end")
	jobs := flag.String("jobs", "", "measure only the services' jobs whose name matches this regular expression (the create, snapshot and destroy they need still run, once, unrecorded); 0 indices, documents and agents leave those rows out")
	flag.Parse()
	if *plain {
		extras = ""
	}
	selected, err := regexp.Compile(*jobs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: -jobs: %v\n", err)
		os.Exit(2)
	}
	if err := run(*bin, ints(*services), ints(*indices), ints(*documents), ints(*fleet), *agents, selected, *jsonOut); err != nil {
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

func run(bin string, services, indices, documents, fleet []int, agents int, selected *regexp.Regexp, jsonOut string) error {
	ctx := context.Background()
	// The servers' data is always new (an agent started on a kept data
	// directory would hold the last run's services); -keep keeps what
	// is generated.
	work, err := os.MkdirTemp("", "provision-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	dir := cmp.Or(keep, work)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var logs servers.LogBuffer
	agent, err := servers.StartConsul(ctx, work, &logs)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, logs.Tail(2000))
	}
	defer agent.Stop()
	es, err := servers.StartCluster(ctx, work, "t1", &logs)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, logs.Tail(2000))
	}
	defer es.Stop()
	consulAddr := wire.front("http://"+agent.Addr, "consul")
	esURL := "http://" + wire.front(es.URL, "search.t1")
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+consulAddr, "NO_COLOR=1")

	var rows []row
	var realSnap string // the snapshot of the most services registered so far
	for _, n := range services {
		specs := filepath.Join(dir, fmt.Sprintf("svc-%d", n))
		if err := writeServices(specs, n); err != nil {
			return err
		}
		if n > synthesizeAbove {
			r, err := synthesizedRows(bin, env, dir, specs, realSnap, n, selected)
			if err != nil {
				return err
			}
			rows = append(rows, r...)
			continue
		}
		each := filepath.Join(dir, fmt.Sprintf("svc-for-each-%d", n))
		if err := writeServicesForEach(each, n); err != nil {
			return err
		}
		module := filepath.Join(dir, fmt.Sprintf("svc-module-%d", n))
		if err := writeServicesModule(module, n); err != nil {
			return err
		}
		// The module's outputs named by an object of the caller (a key
		// listing every service's id), beside the same written out.
		outputs, listed := filepath.Join(dir, fmt.Sprintf("svc-module-outputs-%d", n)), filepath.Join(dir, fmt.Sprintf("svc-ids-%d", n))
		if err := writeIDsKey(outputs, n, writeServicesModule, "[for k, m in module.svc : m.id]"); err != nil {
			return err
		}
		if err := writeIDsKey(listed, n, writeServices, idList(n)); err != nil {
			return err
		}
		parse := parseFloor(specs)
		var put, reput float64
		if selected.MatchString("create (apply)") || selected.MatchString("update all (apply)") {
			put, reput = putFloor(consulAddr, n)
		}
		cmd := func(job string, floorName string, floor float64, args ...string) row {
			if !selected.MatchString(job) {
				if job == "create (apply)" || job == "snapshot" || job == "destroy" {
					measure(bin, env, args...) // what the selected jobs need
				}
				return row{}
			}
			wire.take()
			r := timed(job, n, floorName, floor, bin, env, args...)
			rows = append(rows, r)
			return r
		}
		validate := cmd("validate", "hcl parse", parse, "validate", specs)
		cmd("validate, for_each", "validate, written out", validate.Seconds, "validate", each)
		cmd("validate, module", "validate, written out", validate.Seconds, "validate", module)
		ids := cmd("validate, with a key of the ids", "hcl parse", parse, "validate", listed)
		cmd("validate, module outputs", "validate, written out with the ids", ids.Seconds, "validate", outputs)
		cmd("create (apply)", "PUT loop, parallelism 10", put, "apply", "-auto-approve", "-lock=false", specs)
		// The read floor is measured once the services are there to read.
		read := readFloor(consulAddr, "services") + readFloor(consulAddr, "checks")
		converged := cmd("converged plan", "hcl parse + GET and decode", parse+read, "plan", "-detailed-exitcode", specs)
		// The same services from one for_each plan as no changes (exit 0).
		cmd("converged plan, for_each", "converged plan, written out", converged.Seconds, "plan", "-detailed-exitcode", each)
		// The same services from a module called with for_each.
		cmd("converged plan, module", "converged plan, written out", converged.Seconds, "plan", "-detailed-exitcode", module)
		cmd("plan -json", "hcl parse + GET and decode", parse+read, "plan", "-json", specs)
		// Offline: a snapshot of the converged agent, the plan from it
		// beside validate of the same specs, and provision test of 100
		// runs from it beside 100 validates.
		snap := filepath.Join(dir, fmt.Sprintf("snap-%d.json", n))
		cmd("snapshot", "hcl parse + GET and decode", parse+read, "snapshot", "-out", snap, specs)
		cmd("plan -snapshot", "validate", validate.Seconds, "plan", "-detailed-exitcode", "-snapshot", snap, specs)
		realSnap = snap
		if n <= 1000 && selected.MatchString("test, 100 runs") {
			if err := writeTests(specs, snap, 100); err != nil {
				return err
			}
			if r := measure(bin, env, "test", "-update", specs); r.Exit != 0 {
				return fmt.Errorf("provision test -update: exit %d", r.Exit)
			}
			cmd("test, 100 runs", "100 validates", 100*validate.Seconds, "test", specs)
		}
		cmd("converged apply", "", 0, "apply", "-auto-approve", "-lock=false", specs)
		if selected.MatchString("watch") {
			wr, err := watchRows(bin, env, specs, agent.Addr, n)
			if err != nil {
				return err
			}
			rows = append(rows, wr...)
		}
		cmd("update all (apply)", "re-register PUT loop, par. 10", reput, "apply", "-auto-approve", "-lock=false", "-var", "port_base=20000", specs)
		cmd("destroy", "", 0, "destroy", "-auto-approve", "-lock=false", specs)
	}
	if agents > 0 {
		if len(fleet) == 0 {
			fleet = slices.DeleteFunc(slices.Clone(services), func(n int) bool { return n > synthesizeAbove })
		}
		spread, err := fleetRows(ctx, bin, env, work, dir, agent, agents, fleet, rows)
		if err != nil {
			return err
		}
		rows = append(rows, spread...)
	}
	// start is a process of the binary that does nothing (provision
	// version), the fastest of tries.
	start := best("process start", bin, env, "version").Seconds
	for _, m := range indices {
		specs := filepath.Join(dir, fmt.Sprintf("ix-%d", m))
		if err := writeIndices(specs, m, esURL); err != nil {
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
			wire.take()
			r := best(job.name, bin, env, job.args...)
			r.Job, r.N = job.name, m
			if job.name == "indices: converged plan" {
				// A process against a process: a plan of a few indices is
				// mostly the start of one (the Go runtime, the packages'
				// initialisation), which the in-process floor leaves out.
				floor := start + parse + esReadFloor(esURL, m)
				r.Floor, r.FloorSec, r.Ratio = "process start + hcl parse + the 4 GETs", floor, r.Seconds/floor
			}
			rows = append(rows, r)
		}
	}
	for _, d := range documents {
		specs := filepath.Join(dir, fmt.Sprintf("docs-%d", d))
		if err := writeDocuments(specs, d, esURL); err != nil {
			return err
		}
		parse := parseFloor(specs)
		single, bulk := docWriteFloors(esURL, d)
		files := filepath.Join(dir, fmt.Sprintf("docs-files-%d", d))
		if err := writeDocumentFiles(files, d, esURL); err != nil {
			return err
		}
		var converged float64
		for _, job := range []struct {
			name, floor string
			seconds     float64
			args        []string
		}{
			{"documents: create (apply)", "the _bulk requests alone", bulk, []string{"apply", "-auto-approve", "-lock=false", specs}},
			{"documents: converged plan", "hcl parse + the read requests", 0, []string{"plan", "-detailed-exitcode", specs}},
			// The same documents read from one JSON file each.
			{"documents: plan, JSON files", "converged plan, in HCL", -1, []string{"plan", "-detailed-exitcode", files}},
		} {
			wire.take()
			r := best(job.name, bin, env, job.args...)
			r.Job, r.N = job.name, d
			switch job.seconds {
			case 0:
				job.seconds = parse + docReadFloor(esURL, d)
				converged = r.Seconds
			case -1:
				job.seconds = converged
			}
			r.Floor, r.FloorSec, r.Ratio = job.floor, job.seconds, r.Seconds/job.seconds
			rows = append(rows, r)
		}
		rows = append(rows, row{Job: "documents: single PUT loop", N: d, Seconds: single})
		wire.take()
		r := measure(bin, env, "destroy", "-auto-approve", "-lock=false", "-indices", specs)
		r.Job, r.N = "documents: destroy -indices", d
		rows = append(rows, r)
		take, err := takeOverRows(bin, env, dir, esURL, d, bulk, parse+docReadFloor(esURL, d))
		if err != nil {
			return err
		}
		rows = append(rows, take...)
	}
	fmt.Printf("%-30s %6s %8s %7s %8s %4s  %-30s %8s %6s  %-22s %s\n", "job", "n", "seconds", "growth", "peak MB", "exit", "floor", "seconds", "ratio", "A/B (min-max)", "requests")
	for _, r := range rows {
		fmt.Printf("%-30s %6d %8.3f %7s %8.1f %4d  %-30s %8.3f %6.2f  %-22s %s\n", r.Job, r.N, r.Seconds, growth(r, rows), r.PeakMB, r.Exit, r.Floor, r.FloorSec, r.Ratio, abText(r), counts(r.Requests))
	}
	b, _ := json.MarshalIndent(rows, "", "  ")
	return os.WriteFile(jsonOut, append(b, '\n'), 0o644)
}

// timed is the row of job at n objects (best's), beside its floor when
// it has one (floor > 0).
func timed(job string, n int, floorName string, floor float64, bin string, env []string, args ...string) row {
	r := best(job, bin, env, args...)
	r.Job, r.N = job, n
	if floor > 0 {
		r.Floor, r.FloorSec, r.Ratio = floorName, floor, r.Seconds/floor
	}
	return r
}

// synthesizeAbove is -synthesize-above.
var synthesizeAbove int

// keep is -keep: the directory to generate in and keep, or "".
var keep string

// synthesizedRows are the rows of n services that no agent holds: validate
// of specs, and plan -snapshot from a snapshot of the n services
// converged, synthesized from snap (a real agent's, of fewer).
func synthesizedRows(bin string, env []string, dir, specs, snap string, n int, selected *regexp.Regexp) ([]row, error) {
	if snap == "" {
		return nil, fmt.Errorf("%d services are above -synthesize-above=%d, but no smaller number was registered to synthesize their live state from", n, synthesizeAbove)
	}
	synth := filepath.Join(dir, fmt.Sprintf("snap-%d.json", n))
	if err := synthesize(snap, synth, n); err != nil {
		return nil, err
	}
	var rows []row
	job := func(name, floorName string, floor float64, args ...string) row {
		if !selected.MatchString(name) {
			return row{}
		}
		r := timed(name, n, floorName, floor, bin, env, args...)
		rows = append(rows, r)
		return r
	}
	validate := job("validate", "hcl parse", parseFloor(specs), "validate", specs)
	job("plan -snapshot", "validate", validate.Seconds, "plan", "-detailed-exitcode", "-snapshot", synth, specs)
	return rows, nil
}

// synthesize writes to out the snapshot snap with its agent's services
// grown to the n that writeServices declares: every service of snap is
// svc-<i> with its port at 10000 + i%50000, so svc-0, renamed and its
// port moved, stands for each of them (no other name in svc-0's
// registration starts with svc-0).
func synthesize(snap, out string, n int) error {
	b, err := os.ReadFile(snap)
	if err != nil {
		return err
	}
	var doc provision.Snapshot
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	for k, be := range doc.Backends {
		var state map[string]any
		if err := json.Unmarshal(be.State, &state); err != nil {
			return err
		}
		services, _ := state["services"].(map[string]any)
		if be.Kind != "consul" || services["svc-0"] == nil {
			continue
		}
		tmpl, err := json.Marshal(services["svc-0"])
		if err != nil {
			return err
		}
		grown := make(map[string]json.RawMessage, n)
		for i := range n {
			s := strings.ReplaceAll(string(tmpl), "svc-0", fmt.Sprintf("svc-%d", i))
			grown[fmt.Sprintf("svc-%d", i)] = json.RawMessage(strings.Replace(s, `"Port":10000`, fmt.Sprintf(`"Port":%d`, 10000+i%50000), 1))
		}
		state["services"] = grown
		if doc.Backends[k].State, err = json.Marshal(state); err != nil {
			return err
		}
	}
	// As provision snapshot writes it: indented, the backends last.
	return provision.WriteSnapshot(out, &doc)
}

// writeTests writes dir/tests/bench.provtest.hcl: runs runs of the
// snapshot, copied beside it, each expecting no changes.
func writeTests(dir, snap string, runs int) error {
	// A test reads its snapshot from its own folder or below (the reads
	// are confined), so the snapshot is copied there.
	tests := filepath.Join(dir, "tests")
	if err := os.MkdirAll(tests, 0o755); err != nil {
		return err
	}
	src, err := os.ReadFile(snap)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tests, filepath.Base(snap)), src, 0o644); err != nil {
		return err
	}
	var b strings.Builder
	for i := range runs {
		fmt.Fprintf(&b, "run \"converged %d\" {\n  snapshot          = %q\n  expect_no_changes = true\n}\n\n", i, filepath.Base(snap))
	}
	return os.WriteFile(filepath.Join(tests, "bench.provtest.hcl"), []byte(b.String()), 0o644)
}

// abText is a row's A/B against the base, "1.02 (0.97-1.08)", marked *
// over 1.05, and "mem +7% *" when its peak grew by more than 5%; ""
// without a base.
func abText(r row) string {
	if r.AB == 0 {
		return ""
	}
	mark := ""
	if r.AB > 1.05 {
		mark = " *"
	}
	if r.BasePeakMB > 0 && r.PeakMB > 1.05*r.BasePeakMB {
		mark += fmt.Sprintf(" mem +%.0f%% *", 100*(r.PeakMB/r.BasePeakMB-1))
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)%s", r.AB, r.ABMin, r.ABMax, mark)
}

// growth is how much longer the job of r took than the same job at the
// fewest objects the table has of it ("9.1x" from 10,000 to 100,000);
// "" for that row itself.
func growth(r row, rows []row) string {
	var least *row
	for i := range rows {
		if rows[i].Job == r.Job && rows[i].N > 0 && (least == nil || rows[i].N < least.N) {
			least = &rows[i]
		}
	}
	if least == nil || least.N == r.N || least.Seconds == 0 {
		return ""
	}
	return fmt.Sprintf("%.1fx", r.Seconds/least.Seconds)
}

// counts renders the request counts of a row: "consul 2, search.t1 4".
func counts(n map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, n[k]))
	}
	return strings.Join(parts, ", ")
}

// tries is how many times a job that changes nothing, and each floor,
// is measured, the fastest run kept: on a 2-core machine shared with the
// servers, one run in three could be 30% off.
const tries = 5

// best measures a job that changes nothing (a plan, validate, a process
// start) tries times and keeps the fastest run; other jobs run once.
func best(job, bin string, env []string, args ...string) row {
	r := measure(bin, env, args...)
	if !strings.Contains(job, "plan") && !strings.HasPrefix(job, "validate") && job != "process start" {
		return r
	}
	if baseBin != "" {
		return paired(r, bin, env, args...)
	}
	for range tries - 1 {
		if again := measure(bin, env, args...); again.Seconds < r.Seconds {
			r = again
		}
	}
	return r
}

var (
	// baseBin is -base: the binary of the revision to compare with.
	baseBin string
	pairs   int
)

// paired runs bin and baseBin in turn, pairs times, after first (a run
// of bin): the row is bin's median, with the base's median and the
// median and spread of the pairs' ratios. Pairs keep the ratio fair when
// the machine's speed drifts.
func paired(first row, bin string, env []string, args ...string) row {
	var a, b, ratio []float64
	for range pairs {
		ra, rb := measure(bin, env, args...), measure(baseBin, env, args...)
		a, b, ratio = append(a, ra.Seconds), append(b, rb.Seconds), append(ratio, ra.Seconds/rb.Seconds)
		first.PeakMB, first.BasePeakMB, first.Exit = max(first.PeakMB, ra.PeakMB), max(first.BasePeakMB, rb.PeakMB), max(first.Exit, ra.Exit, rb.Exit)
	}
	first.Seconds, first.BaseSec, first.AB = median(a), median(b), median(ratio)
	first.ABMin, first.ABMax = slices.Min(ratio), slices.Max(ratio)
	return first
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
	return row{Seconds: time.Since(start).Seconds(), Exit: cmd.ProcessState.ExitCode(), PeakMB: peak, Requests: wire.take()}
}

// extras are the fields each service declares beside its address, port
// and frontend: weights and a WAN address, which a registration carries
// beside its tags; -plain leaves them out, for a base revision that does
// not take them (the plan still reads back and compares every field the
// agent reports).
var extras = `  weights          = { passing = 10, warning = 1 }
  tagged_addresses = { wan = { address = "198.51.100.5", port = 80 } }
`

// writeServices declares n gated services.
func writeServices(dir string, n int) error {
	var b bytes.Buffer
	b.WriteString("project = \"bench\"\n\nvariable \"port_base\" {\n  type    = number\n  default = 10000\n}\n")
	for i := range n {
		fmt.Fprintf(&b, `
service "svc-%d" {
  address          = "127.0.0.1"
  port             = var.port_base + %d
%s  frontend {
    rule = "PathPrefix:/svc-%d"
    forward_auth {
      address               = "http://127.0.0.1:8080/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }
}
`, i, i%50000, extras, i)
	}
	return writeSpec(dir, b.Bytes())
}

// writeServicesForEach declares the services of writeServices with one
// block: a for_each over a map of n keys, each service's ID, name and rule
// built from its key, so that both specs declare the same live state.
func writeServicesForEach(dir string, n int) error {
	b := offsets(n)
	b.WriteString(`
service "svc" {
  for_each = local.offsets
  name     = "svc-${each.key}"
  address  = "127.0.0.1"
  port     = var.port_base + each.value
` + extras + `  frontend {
    rule = "PathPrefix:/svc-${each.key}"
    forward_auth {
      address               = "http://127.0.0.1:8080/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }
}
`)
	return writeSpec(dir, b.Bytes())
}

// offsets starts the specs of writeServicesForEach and
// writeServicesModule: the project, port_base, and local.offsets, the map
// of n keys to each service's port offset.
func offsets(n int) *bytes.Buffer {
	var b bytes.Buffer
	b.WriteString("project = \"bench\"\n\nvariable \"port_base\" {\n  type    = number\n  default = 10000\n}\n\nlocals {\n  offsets = {\n")
	for i := range n {
		fmt.Fprintf(&b, "    \"%d\" = %d\n", i, i%50000)
	}
	b.WriteString("  }\n}\n")
	return &b
}

// writeServicesModule declares the services of writeServices through a
// module (modules/svc: one service from its inputs) called with for_each
// over the same map as writeServicesForEach.
func writeServicesModule(dir string, n int) error {
	b := offsets(n)
	b.WriteString(`
module "svc" {
  for_each = local.offsets
  source   = "./modules/svc"
  key      = each.key
  port     = var.port_base + each.value
}
`)
	if err := writeSpec(dir, b.Bytes()); err != nil {
		return err
	}
	return writeSpec(filepath.Join(dir, "modules", "svc"), []byte(`variable "key" {
  type = string
}

variable "port" {
  type = number
}

output "id" {
  value = "svc-${var.key}"
}

service "svc" {
  id      = "svc-${var.key}"
  name    = "svc-${var.key}"
  address = "127.0.0.1"
  port    = var.port
`+extras+`  frontend {
    rule = "PathPrefix:/svc-${var.key}"
    forward_auth {
      address               = "http://127.0.0.1:8080/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }
}
`))
}

// writeIDsKey writes the specs of write, and a key whose value lists the
// services' ids as ids (an expression).
func writeIDsKey(dir string, n int, write func(string, int) error, ids string) error {
	if err := write(dir, n); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "main.hcl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\nkey \"bench/ids\" {\n  value = { ids = %s }\n}\n", ids)
	return errors.Join(err, f.Close())
}

// idList is the ids of writeServices' n services as an HCL list.
func idList(n int) string {
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("%q", fmt.Sprintf("svc-%d", i))
	}
	return "[" + strings.Join(ids, ", ") + "]"
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

// fleetRows starts k client agents joined to the server agent, their
// data in work (fewer if the machine cannot start more, as said on
// stderr), and for each n
// creates n services spread over them, plans them converged and destroys
// them. The converged plan is set beside its floor (hcl parse + every
// agent's two GETs, side by side), beside validate of the same specs and
// beside the one-agent plan of rows.
func fleetRows(ctx context.Context, bin string, env []string, work, dir string, server *servers.Consul, k int, services []int, rows []row) ([]row, error) {
	var clients []*servers.Consul
	var logs servers.LogBuffer
	var addrs []string
	// Started eight at a time: one after another, 100 agents took minutes.
	started := make([]*servers.Consul, k)
	errs := make([]error, k)
	parallel.Do(k, 8, func(i int) {
		// Each on its own loopback address, as nodes are.
		started[i], errs[i] = server.StartClientOn(ctx, work, fmt.Sprintf("node-%d", i), fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250), &logs)
	})
	// Stopped side by side too: each leaves the cluster gracefully, for
	// seconds.
	defer func() { parallel.Do(len(clients), len(clients), func(i int) { clients[i].Stop() }) }()
	for i, c := range started {
		if errs[i] != nil {
			fmt.Fprintf(os.Stderr, "bench: client agent node-%d did not start: %v\n", i, errs[i])
			continue
		}
		clients = append(clients, c)
		addrs = append(addrs, wire.front("http://"+c.Addr, "agents"))
	}
	if len(clients) < k {
		fmt.Fprintf(os.Stderr, "bench: %d client agents started, not %d\n", len(clients), k)
	}
	if len(clients) == 0 {
		return nil, fmt.Errorf("no client agent started\n%s", logs.Tail(2000))
	}
	fmt.Fprintf(os.Stderr, "bench: fleet rows over %d client agents of one cluster\n", len(clients))
	var out []row
	for _, n := range services {
		specs := filepath.Join(dir, fmt.Sprintf("fleet-%d", n))
		if err := writeFleet(specs, n, addrs); err != nil {
			return nil, err
		}
		parse := parseFloor(specs)
		add := func(job, floorName string, floor float64, args ...string) {
			wire.take()
			r := best(job, bin, env, args...)
			r.Job, r.N = fmt.Sprintf("fleet of %d: %s", len(clients), job), n
			if floor > 0 {
				r.Floor, r.FloorSec, r.Ratio = floorName, floor, r.Seconds/floor
			}
			out = append(out, r)
			// Said at once: a row of 100,000 services may outlast the
			// measurement's time bound, and the table comes at the end.
			fmt.Fprintf(os.Stderr, "bench: %s, %d services: %.2f s (%s: %.2f s)\n", r.Job, n, r.Seconds, cmp.Or(floorName, "no floor"), floor)
		}
		alone, together := fleetFloors(addrs, n)
		fmt.Fprintf(os.Stderr, "bench: fleet of %d, %d services: floors %.2f s side by side, %.2f s each agent alone\n", len(clients), n, together, alone)
		add("create", "PUT loops side by side", together, "apply", "-auto-approve", "-lock=false", specs)
		created := out[len(out)-1]
		created.Floor, created.FloorSec, created.Ratio = "each agent alone, times its share", alone, created.Seconds/alone
		out = append(out, created)
		reads := fastest(func() {
			var wg sync.WaitGroup
			for _, a := range addrs {
				for _, what := range []string{"services", "checks"} {
					wg.Add(1)
					go func() { defer wg.Done(); getDecode("http://" + a + "/v1/agent/" + what) }()
				}
			}
			wg.Wait()
		})
		add("converged plan", "hcl parse + GETs side by side", parse+reads, "plan", "-detailed-exitcode", specs)
		validate := best("validate", bin, env, "validate", specs)
		add("converged plan", "validate", validate.Seconds, "plan", "-detailed-exitcode", specs)
		for _, r := range rows {
			if r.Job == "converged plan" && r.N == n {
				add("converged plan", "converged plan, one agent", r.Seconds, "plan", "-detailed-exitcode", specs)
			}
		}
		add("destroy", "", 0, "destroy", "-auto-approve", "-lock=false", specs)
	}
	return out, nil
}

// fleetFloors are the floors of an apply that creates n services spread
// over the agents, with a plain PUT loop per agent (registerLoop: 10 in
// flight, provision's default -parallelism). alone is each agent's own
// register rate, measured alone (one agent after another, on a sample of
// its share) times its share: the slowest share bounds an apply that
// writes the agents side by side, were they not sharing the servers and
// the machine. together is every agent's loop side by side, its whole
// share: the same writes on the same cluster without provision.
func fleetFloors(agents []string, n int) (alone, together float64) {
	share := (n + len(agents) - 1) / len(agents)
	sample := min(share, 100)
	for _, a := range agents {
		alone = max(alone, registerLoop(a, sample, 10000)*float64(share)/float64(sample))
		deregisterLoop(a, sample)
	}
	start := time.Now()
	parallel.Do(len(agents), len(agents), func(i int) { registerLoop(agents[i], share, 10000) })
	together = time.Since(start).Seconds()
	parallel.Do(len(agents), len(agents), func(i int) { deregisterLoop(agents[i], share) })
	return alone, together
}

// writeFleet writes n services spread round-robin over the agents.
func writeFleet(dir string, n int, agents []string) error {
	var b bytes.Buffer
	b.WriteString("project = \"bench\"\n")
	for i, a := range agents {
		fmt.Fprintf(&b, "\nagent \"node-%d\" {\n  address = %q\n}\n", i, a)
	}
	for i := range n {
		fmt.Fprintf(&b, "\nservice \"svc-%d\" {\n  agent   = \"node-%d\"\n  address = \"127.0.0.1\"\n  port    = %d\n  frontend {\n    rule = \"PathPrefix:/svc-%d\"\n  }\n}\n",
			i, i%len(agents), 10000+i%50000, i)
	}
	return writeSpec(dir, b.Bytes())
}

// parseFloor is the time hcl alone takes to parse the specs, the
// fastest of tries.
func parseFloor(dir string) float64 {
	return fastest(func() { _, _ = hclparse.NewParser().ParseHCLFile(filepath.Join(dir, "main.hcl")) })
}

// fastest is the shortest of tries runs of f, in seconds.
func fastest(f func()) float64 {
	var best float64
	for i := range tries {
		start := time.Now()
		f()
		if took := time.Since(start).Seconds(); i == 0 || took < best {
			best = took
		}
	}
	return best
}

// esReadFloor is the four GETs a plan makes of a cluster of m declared
// indices, one after the other, with their answers decoded; the fastest
// of tries.
func esReadFloor(base string, m int) float64 {
	var names []string
	for i := range m {
		names = append(names, fmt.Sprintf("bench-%d", i))
	}
	return fastest(func() {
		for _, path := range []string{"/", "/_nodes/_local/settings", "/" + strings.Join(names, ",") + "?ignore_unavailable=true&flat_settings=true", "/_mapping?filter_path=*.mappings.*._meta"} {
			getDecode(base + path)
		}
	})
}

// getDecode is one GET and the decoding of its JSON answer.
func getDecode(url string) {
	resp, err := http.Get(url)
	if err == nil {
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
	}
}

// readFloor is one GET /v1/agent/<what> and its decoding, the fastest of
// tries.
func readFloor(addr, what string) float64 {
	return fastest(func() { getDecode("http://" + addr + "/v1/agent/" + what) })
}

// send sends one request around provision, as the floors and fixtures
// do, and drops the answer: what it did is measured or read afterwards.
func send(base, method, path, body string) {
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// putFloor registers n bare services with a plain PUT loop at parallelism
// 10 and returns how long that took, then registers them again with
// another port (an update: Consul 1.15 takes about twice as long to
// re-register a service as to create it, whoever sends it) and returns
// that time too, then deregisters them (not timed).
func putFloor(addr string, n int) (create, update float64) {
	create, update = registerLoop(addr, n, 10000), registerLoop(addr, n, 20000)
	deregisterLoop(addr, n)
	return create, update
}

// registerLoop registers the services floor-0 to floor-<n-1> on the agent
// at addr, ports from base, 10 requests in flight, and returns how long
// that took.
func registerLoop(addr string, n, base int) float64 {
	start := time.Now()
	parallel.Do(n, floorParallelism, func(i int) {
		send("http://"+addr, "PUT", "/v1/agent/service/register", fmt.Sprintf(`{"ID":"floor-%d","Name":"floor-%d","Port":%d}`, i, i, base+i%50000))
	})
	return time.Since(start).Seconds()
}

// deregisterLoop deregisters what registerLoop registered.
func deregisterLoop(addr string, n int) {
	parallel.Do(n, floorParallelism, func(i int) { send("http://"+addr, "PUT", fmt.Sprintf("/v1/agent/service/deregister/floor-%d", i), "") })
}

// floorParallelism is the requests in flight of a floor's PUT loop:
// provision's default -parallelism.
const floorParallelism = 10

// writeDocuments declares one index with a visualization type and d
// visualizations, each with its visState as an HCL object.
func writeDocuments(dir string, d int, url string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "project = \"bench\"\n\nsearch \"t1\" {\n  url          = %q\n  cluster_name = \"t1\"\n}\n", url)
	b.WriteString("\nindex \"bench-docs\" {\n  search = \"t1\"\n  mapping \"visualization\" {\n    properties = { title = \"string\", visState = \"string\", version = \"integer\" }\n  }\n}\n")
	for i := range d {
		fmt.Fprintf(&b, "\ndocument \"visualization\" \"vis-%d\" {\n  source = {\n    title    = \"Visualization %d\"\n    version  = 1\n    visState = { title = \"Visualization %d\", type = \"table\", params = { perPage = %d }, aggs = [] }\n  }\n}\n", i, i, i, i%50)
	}
	return writeSpec(dir, b.Bytes())
}

// writeDocumentFiles declares the documents of writeDocuments from one
// JSON file each (objects/vis-<i>.json, the source as the tool exports
// it, visState as JSON text), with one document block and fileset.
func writeDocumentFiles(dir string, d int, url string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "project = \"bench\"\n\nsearch \"t1\" {\n  url          = %q\n  cluster_name = \"t1\"\n}\n", url)
	b.WriteString("\nindex \"bench-docs\" {\n  search = \"t1\"\n  mapping \"visualization\" {\n    properties = { title = \"string\", visState = \"string\", version = \"integer\" }\n  }\n}\n")
	b.WriteString("\ndocument \"visualization\" \"vis\" {\n  for_each = fileset(\"objects\", \"*.json\")\n  id       = trimsuffix(each.key, \".json\")\n  source   = jsondecode(file(\"objects/${each.key}\"))\n}\n")
	if err := writeSpec(dir, b.Bytes()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o755); err != nil {
		return err
	}
	for i := range d {
		vis, _ := json.Marshal(map[string]any{"title": fmt.Sprintf("Visualization %d", i), "type": "table", "params": map[string]any{"perPage": i % 50}, "aggs": []any{}})
		src, _ := json.MarshalIndent(map[string]any{"title": fmt.Sprintf("Visualization %d", i), "version": 1, "visState": string(vis)}, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "objects", fmt.Sprintf("vis-%d.json", i)), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// docBody is the body provision writes for the i-th document.
func docBody(i int) string {
	return fmt.Sprintf(`{"provision":{"managed-by":"provision","provision-project":"bench"},"title":"Visualization %d","version":1,"visState":"{\"aggs\":[],\"params\":{\"perPage\":%d},\"title\":\"Visualization %d\",\"type\":\"table\"}"}`, i, i%50, i)
}

// takeOverRows makes the d documents of writeDocuments by hand (an index
// without marks and a _bulk of their sources), then takes them over as a
// new user would: one import block with for_each, plan
// -generate-config-out, apply, and the converged plan after; beside
// validate of the specs it ends with, the _bulk floor and the read floor.
func takeOverRows(bin string, env []string, dir, esURL string, d int, bulk, read float64) ([]row, error) {
	specs := filepath.Join(dir, fmt.Sprintf("take-%d", d))
	var b bytes.Buffer
	fmt.Fprintf(&b, "project = \"bench\"\n\nsearch \"t1\" {\n  url          = %q\n  cluster_name = \"t1\"\n}\n", esURL)
	b.WriteString("\nindex \"bench-docs\" {\n  search = \"t1\"\n  mapping \"visualization\" {\n    properties = { title = \"string\", visState = \"string\", version = \"integer\" }\n  }\n}\n")
	fmt.Fprintf(&b, "\nimport {\n  to = index.bench-docs\n}\n\nimport {\n  for_each = toset([for i in range(%d) : \"vis-${i}\"])\n  to       = document[\"bench-docs/visualization/${each.value}\"]\n}\n", d)
	if err := writeSpec(specs, b.Bytes()); err != nil {
		return nil, err
	}
	do := func(method, path, body string) { send(esURL, method, path, body) }
	do("PUT", "/bench-docs", `{"mappings":{"visualization":{"properties":{"title":{"type":"string"},"visState":{"type":"string"},"version":{"type":"integer"}}}}}`)
	for from := 0; from < d; from += 500 {
		var nd strings.Builder
		for i := from; i < min(from+500, d); i++ {
			fmt.Fprintf(&nd, "{\"create\":{\"_index\":\"bench-docs\",\"_type\":\"visualization\",\"_id\":\"vis-%d\"}}\n%s\n", i, strings.Replace(docBody(i), `"provision":{"managed-by":"provision","provision-project":"bench"},`, "", 1))
		}
		do("POST", "/_bulk?refresh=true", nd.String())
	}
	var rows []row
	job := func(name string, args ...string) row {
		wire.take()
		r := measure(bin, env, args...)
		r.Job, r.N = name, d
		rows = append(rows, r)
		return r
	}
	gen := job("take over: generate + plan", "plan", "-generate-config-out", filepath.Join(specs, "generated.hcl"), specs)
	validate := best("validate", bin, env, "validate", specs)
	rows[len(rows)-1].Floor, rows[len(rows)-1].FloorSec, rows[len(rows)-1].Ratio = "validate of the specs", validate.Seconds, gen.Seconds/validate.Seconds
	apply := job("take over: apply", "apply", "-auto-approve", "-lock=false", specs)
	rows[len(rows)-1].Floor, rows[len(rows)-1].FloorSec, rows[len(rows)-1].Ratio = "the _bulk requests alone", bulk, apply.Seconds/bulk
	wire.take()
	conv := best("take over: converged plan", bin, env, "plan", "-detailed-exitcode", specs)
	conv.Job, conv.N, conv.Floor, conv.FloorSec, conv.Ratio = "take over: converged plan", d, "hcl parse + the read requests", read, conv.Seconds/read
	rows = append(rows, conv)
	job("take over: destroy -indices", "destroy", "-auto-approve", "-lock=false", "-indices", specs)
	return rows, nil
}

// docWriteFloors writes the d documents of writeDocuments into a scratch
// index, once as a loop of single PUTs at parallelism 10 and once as the
// _bulk requests provision sends (500 items each, refresh=true), and
// returns both times.
func docWriteFloors(base string, d int) (single, bulk float64) {
	do := func(method, path, body string) { send(base, method, path, body) }
	do("DELETE", "/floor-docs", "")
	do("PUT", "/floor-docs", `{"mappings":{"visualization":{"properties":{"title":{"type":"string"},"visState":{"type":"string"},"version":{"type":"integer"}}}}}`)
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 10)
	for i := range d {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			do("PUT", fmt.Sprintf("/floor-docs/visualization/vis-%d?op_type=create", i), docBody(i))
		}()
	}
	wg.Wait()
	single = time.Since(start).Seconds()
	do("DELETE", "/floor-docs", "")
	do("PUT", "/floor-docs", `{"mappings":{"visualization":{"properties":{"title":{"type":"string"},"visState":{"type":"string"},"version":{"type":"integer"}}}}}`)
	start = time.Now()
	// Each batch of documents, then the project's records of them (a
	// document's change writes both: provision/search/record.go).
	for from := 0; from < d; from += 500 {
		var nd, records strings.Builder
		for i := from; i < min(from+500, d); i++ {
			fmt.Fprintf(&nd, "{\"create\":{\"_index\":\"floor-docs\",\"_type\":\"visualization\",\"_id\":\"vis-%d\"}}\n%s\n", i, docBody(i))
			fmt.Fprintf(&records, "{\"index\":{\"_index\":\"floor-records\",\"_type\":\"document\",\"_id\":\"bench/floor-docs/visualization/vis-%d\"}}\n"+
				"{\"id\":\"vis-%d\",\"index\":\"floor-docs\",\"project\":\"bench\",\"type\":\"visualization\",\"version\":1}\n", i, i)
		}
		do("POST", "/_bulk?refresh=true", nd.String())
		do("POST", "/_bulk?refresh=true", records.String())
	}
	bulk = time.Since(start).Seconds()
	do("DELETE", "/floor-docs", "")
	do("DELETE", "/floor-records", "")
	return single, bulk
}

// docReadFloor is the requests a converged plan of d documents makes of
// the cluster, one after the other, with their answers decoded; the
// fastest of tries.
func docReadFloor(base string, d int) float64 {
	var ids []string
	for i := range d {
		ids = append(ids, fmt.Sprintf(`{"_index":"bench-docs","_type":"visualization","_id":"vis-%d"}`, i))
	}
	post := func(path, body string) {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err == nil {
			var v any
			_ = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
		}
	}
	return fastest(func() {
		for _, path := range []string{"/", "/_nodes/_local/settings", "/bench-docs?ignore_unavailable=true&flat_settings=true", "/_mapping?filter_path=*.mappings.*._meta"} {
			getDecode(base + path)
		}
		post("/_mget", `{"docs":[`+strings.Join(ids, ",")+`]}`)
		post("/bench-docs/_search?ignore_unavailable=true", `{"size":10000,"version":true,"query":{"term":{"provision.provision-project":"bench"}}}`)
		post("/.provision/document/_search", `{"size":10000,"query":{"match_phrase":{"project":"bench"}}}`)
	})
}

// watchRows start provision watch -heal on the n services (converged),
// deregister one of them, and time its registration's reappearance,
// beside the floor: how long the catalog's blocking query, which the
// watcher follows, takes to answer after the same deregistration. Then
// the watcher's CPU over 10 s of idle, in percent of one core.
func watchRows(bin string, env []string, specs, agentAddr string, n int) ([]row, error) {
	var out servers.LogBuffer
	cmd := exec.Command(bin, "watch", "-heal", "-interval", "1h", specs)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.Tail(1<<16), "no drift (start)") {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			return nil, fmt.Errorf("watch did not start:\n%s", out.Tail(4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	do := func(method, path string) []byte {
		req, _ := http.NewRequest(method, "http://"+agentAddr+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	var self struct{ Config struct{ NodeName string } }
	_ = json.Unmarshal(do("GET", "/v1/agent/self"), &self)
	id := fmt.Sprintf("svc-%d", n/2)
	// The floor: a blocking query of the node's services, answered by the
	// deregistration.
	resp, err := http.Get("http://" + agentAddr + "/v1/catalog/node-services/" + self.Config.NodeName)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	index := resp.Header.Get("X-Consul-Index")
	answered := make(chan time.Time, 1)
	go func() {
		r, err := http.Get("http://" + agentAddr + "/v1/catalog/node-services/" + self.Config.NodeName + "?index=" + index + "&wait=30s")
		if err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		answered <- time.Now()
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	do("PUT", "/v1/agent/service/deregister/"+id)
	floor := (<-answered).Sub(start).Seconds()
	registered := func() bool {
		r, err := http.Get("http://" + agentAddr + "/v1/agent/service/" + id)
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	}
	for !registered() {
		if time.Since(start) > time.Minute {
			return nil, fmt.Errorf("%s was not registered again within a minute:\n%s", id, out.Tail(4000))
		}
		time.Sleep(5 * time.Millisecond)
	}
	healed := time.Since(start).Seconds()
	time.Sleep(2 * time.Second) // the reconcile after the repair
	cpu := func() float64 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ut, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		return (ut + st) / 100 // clock ticks
	}
	before := cpu()
	time.Sleep(10 * time.Second)
	idle := (cpu() - before) / 10 * 100
	return []row{
		{Job: "watch: deregistered, registered again", N: n, Seconds: healed, Floor: "blocking query answers", FloorSec: floor, Ratio: healed / floor},
		{Job: "watch: idle CPU, % of a core", N: n, Seconds: idle},
	}, nil
}
