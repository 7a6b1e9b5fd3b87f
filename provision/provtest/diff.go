package provtest

import (
	"fmt"
	"strings"
)

// unified is a unified diff of two texts, line by line (old -, new +),
// with three lines of context around each change.
func unified(name, old, new string) string {
	a, b := strings.SplitAfter(old, "\n"), strings.SplitAfter(new, "\n")
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
		i, j int // 1-based line numbers in a and b
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i], i + 1, j + 1})
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			lines = append(lines, line{'+', b[j], i + 1, j + 1})
			j++
		default:
			lines = append(lines, line{'-', a[i], i + 1, j + 1})
			i++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s (golden)\n+++ %s (this plan)\n", name, name)
	for k := 0; k < len(lines); {
		if lines[k].op == ' ' {
			k++
			continue
		}
		lo := max(0, k-3)
		hi := k
		for hi < len(lines) {
			if lines[hi].op != ' ' {
				hi++
				continue
			}
			run := hi
			for run < len(lines) && lines[run].op == ' ' {
				run++
			}
			if run-hi > 6 || run == len(lines) {
				hi = min(hi+3, len(lines))
				break
			}
			hi = run
		}
		fmt.Fprintf(&out, "@@ -%d +%d @@\n", lines[lo].i, lines[lo].j)
		for _, l := range lines[lo:hi] {
			out.WriteString(string(l.op) + strings.TrimSuffix(l.text, "\n") + "\n")
		}
		k = hi
	}
	return out.String()
}
