package plans

// Edit is one step of a diff of two sequences of lines: Op ' ' keeps a
// line of both, '-' removes one of the first, '+' adds one of the second.
type Edit struct {
	Op   byte
	Text string
}

// Edits is the shortest edit script from a to b, along a longest common
// subsequence, removals before additions where they meet.
func Edits(a, b []string) []Edit {
	// lcs[i][j] is the length of the common subsequence of a[i:] and b[j:].
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
	var out []Edit
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, Edit{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, Edit{'-', a[i]})
			i++
		default:
			out = append(out, Edit{'+', b[j]})
			j++
		}
	}
	return out
}
