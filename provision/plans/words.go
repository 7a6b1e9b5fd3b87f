package plans

import (
	"encoding/json"
	"strings"
)

// Plural is word, with an s unless n is 1: "1 change", "2 changes".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Compact is v as one line of JSON.
func Compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// OrNone is ss joined with commas, or none when there are none.
func OrNone(ss []string, none string) string {
	if len(ss) == 0 {
		return none
	}
	return strings.Join(ss, ", ")
}
