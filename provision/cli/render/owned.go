package render

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
)

// Owned writes the address of every object the project owns, live or as
// the snapshot recorded it, one a line, as the plan addresses it (for
// -target and scripts): those the plan leaves, updates, deletes or lets
// go of, in the plan's order. An object it would create or import is not
// the project's yet.
func Owned(w io.Writer, p *plans.Plan) error {
	for _, a := range OwnedAddrs(p) {
		if _, err := fmt.Fprintln(w, a); err != nil {
			return err
		}
	}
	return nil
}

// OwnedAddrs are the addresses of the objects the project owns now: those
// the plan leaves, updates, deletes or lets go of.
func OwnedAddrs(p *plans.Plan) []addrs.Addr {
	var out []addrs.Addr
	for _, c := range p.Changes {
		switch c.Action {
		case plans.NoOp, plans.Update, plans.Delete, plans.Forget:
			out = append(out, c.Addr)
		}
	}
	return out
}

// OutputValues writes the root specs' outputs, as terraform output does:
// each "name = value" (a sensitive one's value "(sensitive)"); with name,
// that one's value alone (raw: a string without its quotes); with asJSON,
// one JSON object of each name's value and sensitivity.
func OutputValues(w io.Writer, p *plans.Plan, name string, asJSON, raw bool) error {
	outputs := p.Outputs
	if name != "" {
		o, ok := p.Outputs[name]
		if !ok {
			return fmt.Errorf("the specs have no output %q (they have %s)", name, plans.OrNone(sortedKeys(p.Outputs), "none"))
		}
		outputs = map[string]plans.Output{name: o}
	}
	if asJSON {
		b, err := plans.MarshalJSON(outputs, "")
		if err == nil {
			_, err = fmt.Fprintf(w, "%s\n", b)
		}
		return err
	}
	for _, n := range sortedKeys(outputs) {
		v := string(outputs[n].Value)
		if outputs[n].Sensitive {
			v = "(sensitive)"
		}
		var s string
		switch {
		case name != "" && raw && json.Unmarshal(outputs[n].Value, &s) == nil && !outputs[n].Sensitive:
			_, err := fmt.Fprintln(w, s)
			return err
		case name != "":
			_, err := fmt.Fprintln(w, v)
			return err
		}
		if _, err := fmt.Fprintf(w, "%s = %s\n", n, v); err != nil {
			return err
		}
	}
	return nil
}
