// Package fuzzing bounds the time one input of a fuzz target may take.
// Go's fuzzer has no such bound: an input that makes the code under test
// spin for minutes is only a slow run that ends with -fuzztime. Run
// through Bounded, it fails the target, naming the input, and the fuzzer
// saves it under the package's testdata/fuzz, so that every later
// go test replays it.
package fuzzing

import (
	"flag"
	"testing"
	"time"
)

// Timeout is the bound on one input, set with -fuzz-input-timeout.
var Timeout = flag.Duration("fuzz-input-timeout", time.Second,
	"fail a fuzz target on an input that takes longer than this (multiplied by raceFactor under the race detector)")

// Bounded runs body, the work of one fuzz input, and fails t when it
// takes longer than the bound: the body's goroutine is left running
// (nothing can stop it) and the target ends at once. body may call
// t.Fatal: that ends body's goroutine, and the failure is t's. The race detector
// slows code five to ten times, so the bound is raceFactor times longer
// under it.
func Bounded(t testing.TB, input any, body func()) {
	t.Helper()
	bound := *Timeout * raceFactor
	done := make(chan struct{})
	go func() {
		defer close(done)
		body()
	}()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("the input took longer than %s (-fuzz-input-timeout=%s): %.300q", bound, *Timeout, input)
	}
}
