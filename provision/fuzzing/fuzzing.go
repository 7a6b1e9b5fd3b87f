// Package fuzzing bounds the time one input of a fuzz target may take.
// Go's fuzzer has no such bound: an input that makes the code under test
// spin for minutes is only a slow run that ends with -fuzztime. Run
// through Bounded, it fails the target, naming the input, and the fuzzer
// saves it under the package's testdata/fuzz, so that every later
// go test replays it.
package fuzzing

import (
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Timeout is the bound on one input, set with -fuzz-input-timeout.
var Timeout = flag.Duration("fuzz-input-timeout", 3*time.Second,
	"fail a fuzz target on an input that takes longer than this (multiplied by raceFactor under the race detector)")

// Bounded runs body, the work of one fuzz input, on a goroutine of its
// own, and fails t when it takes longer than the bound: the goroutine is
// left running (nothing can stop it) and the target ends at once. body
// reports to the TB it is given, whose Fatal ends body's goroutine; the
// failure is t's, reported from the test's goroutine. The race detector
// slows code five to ten times, so the bound is raceFactor times longer
// under it.
func Bounded(t testing.TB, input any, body func(t testing.TB)) {
	t.Helper()
	bound := *Timeout * raceFactor
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(rec)
	}()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case <-done:
		if msg, failed := rec.result(); failed {
			t.Fatal(msg)
		}
	case <-timer.C:
		t.Fatalf("the input took longer than %s (-fuzz-input-timeout=%s): %.300q", bound, *Timeout, input)
	}
}

// recorder is the TB body reports to: it keeps the first failure.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	msg    string
	failed bool
}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.failed {
		r.msg, r.failed = msg, true
	}
}

func (r *recorder) result() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msg, r.failed
}

func (r *recorder) Helper()                        {}
func (r *recorder) Error(args ...any)              { r.fail(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, a ...any) { r.fail(fmt.Sprintf(format, a...)) }
func (r *recorder) Fatal(args ...any)              { r.fail(fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) Fatalf(format string, a ...any) {
	r.fail(fmt.Sprintf(format, a...))
	runtime.Goexit()
}
func (r *recorder) Fail()        { r.fail("failed") }
func (r *recorder) FailNow()     { r.fail("failed"); runtime.Goexit() }
func (r *recorder) Failed() bool { _, f := r.result(); return f }

// SameJSON fails t unless got is json.Marshal's encoding of v, byte for
// byte (a hand encoder's fuzz target holds it to that); what names the
// value in the failure.
func SameJSON(t testing.TB, what string, v any, got []byte) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: encoded\n%s\nwant\n%s", what, got, want)
	}
}
