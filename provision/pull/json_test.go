package pull

import (
	"testing"
)

// TestRewriteJSON: a JSON file brought to a new value keeps its key
// order, its indentation, its one-line lists and objects, the text of the
// scalars that did not change and the JSON text in its strings.
func TestRewriteJSON(t *testing.T) {
	for _, tc := range []struct{ name, src, value, want string }{
		{"order and indentation kept",
			"{\n    \"b\": 1,\n    \"a\": {\n        \"y\": 1.0,\n        \"x\": 2\n    }\n}\n",
			`{"a":{"x":3,"y":1},"b":1,"c":true}`,
			"{\n    \"b\": 1,\n    \"a\": {\n        \"y\": 1.0,\n        \"x\": 3\n    },\n    \"c\": true\n}\n"},
		{"a one-line list stays on one line",
			"{\n  \"columns\": [\"level\", \"message\"]\n}",
			`{"columns":["level","message","host"]}`,
			"{\n  \"columns\": [\"level\", \"message\", \"host\"]\n}"},
		{"JSON text stays text, in its order",
			`{"visState": "{\"title\":\"T\",\"params\":{\"b\":true,\"a\":1}}"}`,
			`{"visState":{"params":{"a":1,"b":false},"title":"T"}}`,
			`{"visState": "{\"title\":\"T\",\"params\":{\"b\":false,\"a\":1}}"}`},
		{"a key gone",
			"{\n  \"a\": 1,\n  \"b\": 2\n}\n",
			`{"b":2}`,
			"{\n  \"b\": 2\n}\n"},
		{"characters kept as written",
			`{"q": "a < b & c", "n": 1}`,
			`{"n":2,"q":"a < b & c"}`,
			`{"q": "a < b & c", "n": 2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rewriteJSON([]byte(tc.src), decode([]byte(tc.value)))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
