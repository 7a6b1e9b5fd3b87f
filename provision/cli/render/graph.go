package render

import (
	"fmt"
	"io"
	"strconv"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
)

// DOT writes the apply order of a plan as a Graphviz graph: one
// cluster per change, its requests chained in the order they are sent.
// Clusters are connected only where a change needs another (a document
// after its index and the documents it names): the rest may run in
// parallel.
func DOT(w io.Writer, p *plans.Plan) error {
	_, err := fmt.Fprintf(w, "digraph %s {\n  rankdir = \"LR\";\n  node [shape = \"box\"];\n", strconv.Quote("provision "+p.Project))
	for i, c := range p.Changes {
		if c.Action == plans.NoOp || err != nil {
			continue
		}
		_, err = fmt.Fprintf(w, "  subgraph \"cluster_%d\" {\n    label = %s;\n", i, strconv.Quote(c.Action.Symbol()+" "+c.Addr.String()))
		for j, r := range c.Requests {
			fmt.Fprintf(w, "    \"%d.%d\" [label = %s];\n", i, j+1, strconv.Quote(r.Method+" "+r.Path))
			if j > 0 {
				fmt.Fprintf(w, "    \"%d.%d\" -> \"%d.%d\";\n", i, j, i, j+1)
			}
		}
		fmt.Fprintf(w, "  }\n")
	}
	// A change that needs another starts after its last request.
	at := map[addrs.Addr]int{}
	for i, c := range p.Changes {
		at[c.Addr] = i
	}
	for i, c := range p.Changes {
		for _, n := range c.Needs {
			if j, ok := at[n]; ok && err == nil && c.Action != plans.NoOp && len(c.Requests) > 0 && len(p.Changes[j].Requests) > 0 {
				_, err = fmt.Fprintf(w, "  \"%d.%d\" -> \"%d.1\";\n", j, len(p.Changes[j].Requests), i)
			}
		}
	}
	if err == nil {
		_, err = fmt.Fprintf(w, "}\n")
	}
	return err
}
