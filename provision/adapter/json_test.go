package adapter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/fuzzing"
)

// objects are JSON texts DecodeObject must decode exactly as
// json.Unmarshal does: objects whose strings hold the commas, brackets,
// quotes and escapes a cut could trip on, keys given twice, and what is
// not one object (a comma too many, trailing text, another value).
var objects = []string{
	`{"a":1,"b":2,"c":3,"d":4,"e":5}`,
	"{\n    \"svc-0\": {\n        \"ID\": \"svc-0\",\n        \"Tags\": [\"a,b\", \"}\"]\n    },\n    \"svc-1\": {\n        \"ID\": \"svc-1\"\n    }\n}\n",
	`{"a":1,"b":2,"a":3,"b":4,"a":5}`,
	`{"a":"x,}\"y","b":"\\","c":"\\\"},{","d":"\u007d,"}`,
	`{"a":"\",\"","b":"\"}","c":"\\","d":"\\\",","e":2}`,
	`{"a":{"b":[1,2,{"c":","}]},"d":[],"e":{"f":{"g":"}"}},"h":null}`,
	` {"a" : 1 , "b" : [ { } , [ ] ] , "c" : "" } `,
	`{"a":1,}`,
	`{"a":1,,"b":2}`,
	`{,"a":1}`,
	`{"a":1,"b":2`,
	`{"a":1,"b":"2}`,
	`{"a":1,"b":[2}`,
	`{"a":1,"b":{2]}`,
	`{"a":1} x`,
	`{"a":1}{"b":2}`,
	`x{"a":1}`,
	`{"a":1,"b":2]`,
	"{\"a\":\"\xff\xfe\",\"b\":\"ok\"}", `{"a":"\xff","b":"ok"}`,
	`{}`, `{ }`, `[1,2,3]`, `null`, `"x"`, ``, `{`, `}`,
}

// checkDecodeObject holds decodeObject, cut in n runs, to json.Unmarshal:
// the same map and the same error.
func checkDecodeObject(t testing.TB, body []byte, n int) {
	var want map[string]any
	wantErr := json.Unmarshal(body, &want)
	got, err := decodeObject[any](body, n)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%q in %d runs: error %v, want %v", body, n, err, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%q in %d runs (-json.Unmarshal +decodeObject):\n%s", body, n, diff)
	}
}

func TestDecodeObject(t *testing.T) {
	for _, o := range objects {
		for n := 1; n <= 5; n++ {
			checkDecodeObject(t, []byte(o), n)
			// A valid object is cut between its members, never in a
			// string or a nested value.
			for _, r := range objectRuns([]byte(o), n) {
				if json.Valid([]byte(o)) && !json.Valid(r) {
					t.Errorf("%s cut in %d: a run %s", o, n, r)
				}
			}
		}
	}
	// Escaped quotes and backslashes end no string: the cut is the first
	// comma between members past the middle.
	escaped := []byte(objects[4])
	if runs := objectRuns(escaped, 2); len(runs) != 2 || !strings.HasSuffix(string(runs[0]), `"c":"\\"}`) {
		t.Errorf("%s cut in two: %q", escaped, runs)
	}
	// A large object is cut, n runs of about the same size, and decoded
	// as the whole; a value of another type fails as the whole does.
	var b strings.Builder
	sep := "{"
	for i := range 1000 {
		fmt.Fprintf(&b, "%s\n  \"svc-%d\": {\"ID\": \"svc-%d\", \"Tags\": [\"a,}\", \"\\\"{\"], \"Port\": %d}", sep, i, i, i)
		sep = ","
	}
	b.WriteString("\n}")
	large := []byte(b.String())
	for n := 2; n <= 4; n++ {
		runs := objectRuns(large, n)
		if len(runs) != n {
			t.Fatalf("%d runs of %d services, want %d", len(runs), 1000, n)
		}
		for _, r := range runs {
			if len(r) < len(large)/n/2 || !json.Valid(r) {
				t.Errorf("a run of %d bytes, a %d-part cut of %d bytes, valid JSON %t", len(r), n, len(large), json.Valid(r))
			}
		}
		checkDecodeObject(t, large, n)
	}
	type service struct{ ID, Port string }
	_, err := decodeObject[service](large, 2)
	if want := json.Unmarshal(large, new(map[string]service)); err == nil || err.Error() != want.Error() {
		t.Errorf("a port that is a number, decoded as a string: %v, want %v", err, want)
	}
}

// FuzzDecodeObject: whatever the text and however it is cut, DecodeObject
// decodes what json.Unmarshal decodes, and fails as it does.
func FuzzDecodeObject(f *testing.F) {
	for _, o := range objects {
		f.Add([]byte(o), uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		fuzzing.Bounded(t, body, func(t testing.TB) { checkDecodeObject(t, body, int(n%4)+2) })
	})
}
