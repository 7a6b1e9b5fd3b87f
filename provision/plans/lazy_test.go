package plans

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestViewWhenRead: a view worked out when read is encoded once, for the
// change and its copies, only when read, and is written and read back
// as its JSON; the zero View is null.
func TestViewWhenRead(t *testing.T) {
	worked := 0
	v := ViewWhenRead(func() json.RawMessage { worked++; return json.RawMessage(`{"ID":"api"}`) })
	type sides struct {
		Before View `json:"before"`
		After  View `json:"after"`
	}
	c := sides{v, v}
	copied := c
	if worked != 0 {
		t.Fatalf("the view was encoded %d times before it was read", worked)
	}
	b, err := json.Marshal(&copied)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.After.JSON()); got != `{"ID":"api"}` || worked != 1 {
		t.Fatalf("read three times: %s, encoded %d times; want once", got, worked)
	}
	var back sides
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, back); diff != "" {
		t.Errorf("read back from %s (-made +read):\n%s", b, diff)
	}
	var none sides
	if err := json.Unmarshal([]byte(`{"before":null,"after":{"ID":"api"}}`), &none); err != nil {
		t.Fatal(err)
	}
	if s, _ := json.Marshal(sides{View{}, ViewOf(nil)}); string(s) != `{"before":null,"after":null}` {
		t.Errorf("no view is written %s, want null", s)
	}
	if string(none.Before.JSON()) != "null" || !none.After.Equal(c.After) || none.Before.Equal(c.After) {
		t.Errorf("read back: before %s, after %s", none.Before.JSON(), none.After.JSON())
	}
}
