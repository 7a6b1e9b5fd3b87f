package fuzzing_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/fuzzing"
)

// FuzzSlowInput stands for a target with an input that hangs; it runs
// only when TestSlowInputFails starts it.
func FuzzSlowInput(f *testing.F) {
	if os.Getenv("FUZZING_SLOW_INPUT") == "" {
		f.Skip("run by TestSlowInputFails")
	}
	f.Add("fast")
	f.Add("slow")
	f.Add("wrong")
	f.Fuzz(func(t *testing.T, s string) {
		fuzzing.Bounded(t, s, func(t testing.TB) {
			switch s {
			case "slow":
				time.Sleep(time.Hour)
			case "wrong":
				t.Fatalf("the body found %q wrong", s)
			}
		})
	})
}

// TestSlowInputFails: a slow input fails its target within the bound,
// naming the input; a fast one passes; a failure of the body is the
// target's.
func TestSlowInputFails(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^FuzzSlowInput$", "-test.v", "-fuzz-input-timeout=200ms")
	cmd.Env = append(os.Environ(), "FUZZING_SLOW_INPUT=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err == nil {
		t.Fatalf("a target with an input that sleeps for an hour passed:\n%s", out)
	}
	for _, want := range []string{"--- PASS: FuzzSlowInput/seed#0", "--- FAIL: FuzzSlowInput/seed#1",
		"the input took longer than ", `(-fuzz-input-timeout=200ms): "slow"`, "--- FAIL: FuzzSlowInput/seed#2", `the body found "wrong" wrong`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if took > time.Minute {
		t.Errorf("the slow input failed after %s", took)
	}
}
