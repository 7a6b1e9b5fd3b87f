package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/schema"
	"github.com/rogpeppe/go-internal/diff"
)

// exitUnformatted is fmt -check's code for files not in canonical layout.
const exitUnformatted = 3

func (c *cli) fmt(args []string) int {
	fs := c.flagSet("fmt", "fmt [options] [DIR]")
	check := fs.Bool("check", false, "change nothing; list the files not in canonical layout and exit 3 if any")
	showDiff := fs.Bool("diff", false, "print the changes as a diff")
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	paths, err := schema.SpecFiles(dirArg(pos))
	if err != nil {
		fmt.Fprintf(c.stderr, "Error: %s\n", err)
		return exitError
	}
	var diags hcl.Diagnostics
	files := map[string]*hcl.File{}
	unformatted := false
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(c.stderr, "Error: %s\n", err)
			return exitError
		}
		out, fdiags := schema.Format(src, path)
		if fdiags.HasErrors() {
			diags = append(diags, fdiags...)
			files[path] = &hcl.File{Bytes: src}
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		unformatted = true
		fmt.Fprintln(c.stdout, path)
		if *showDiff {
			c.stdout.Write(diff.Diff(path, src, path+" (formatted)", out))
		}
		if !*check {
			if err := os.WriteFile(path, out, 0o644); err != nil {
				fmt.Fprintf(c.stderr, "Error: %s\n", err)
				return exitError
			}
		}
	}
	if diags.HasErrors() {
		c.printDiags(diags, files, false)
		return exitError
	}
	if *check && unformatted {
		return exitUnformatted
	}
	return exitOK
}
