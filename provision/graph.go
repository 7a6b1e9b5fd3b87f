package provision

import (
	"fmt"
	"io"
	"strconv"
)

// RenderDOT writes the apply order of a plan as a Graphviz graph: one
// cluster per change, its requests chained in the order they are sent.
// Clusters are not connected: their changes may run in parallel.
func RenderDOT(w io.Writer, p *Plan) error {
	_, err := fmt.Fprintf(w, "digraph %s {\n  rankdir = \"LR\";\n  node [shape = \"box\"];\n", strconv.Quote("provision "+p.Project))
	for i, c := range p.Changes {
		if c.Action == NoOp || err != nil {
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
	if err == nil {
		_, err = fmt.Fprintf(w, "}\n")
	}
	return err
}
