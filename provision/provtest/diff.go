package provtest

import (
	"fmt"
	"strings"

	"github.com/provision-dev/provision/provision/plans"
)

// unified is a unified diff of two texts, line by line (old -, new +),
// with three lines of context around each change.
func unified(name, old, new string) string {
	edits := plans.Edits(strings.SplitAfter(old, "\n"), strings.SplitAfter(new, "\n"))
	// at[k] are the line numbers, in old and new, of edit k.
	type pos struct{ i, j int }
	at := make([]pos, len(edits))
	i, j := 1, 1
	for k, e := range edits {
		at[k] = pos{i, j}
		if e.Op != '+' {
			i++
		}
		if e.Op != '-' {
			j++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s (golden)\n+++ %s (this plan)\n", name, name)
	for k := 0; k < len(edits); {
		if edits[k].Op == ' ' {
			k++
			continue
		}
		lo, hi := max(0, k-3), k
		for hi < len(edits) {
			if edits[hi].Op != ' ' {
				hi++
				continue
			}
			run := hi
			for run < len(edits) && edits[run].Op == ' ' {
				run++
			}
			if run-hi > 6 || run == len(edits) {
				hi = min(hi+3, len(edits))
				break
			}
			hi = run
		}
		fmt.Fprintf(&out, "@@ -%d +%d @@\n", at[lo].i, at[lo].j)
		for _, e := range edits[lo:hi] {
			out.WriteString(string(e.Op) + strings.TrimSuffix(e.Text, "\n") + "\n")
		}
		k = hi
	}
	return out.String()
}
