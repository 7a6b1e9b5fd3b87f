package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

func TestZZProf(t *testing.T) {
	args := strings.Fields(os.Getenv("ZZ_ARGS"))
	if len(args) == 0 {
		t.Skip()
	}
	for i := 0; i < 5; i++ {
		newCLI(strings.NewReader(""), io.Discard, io.Discard).run(args)
	}
}
