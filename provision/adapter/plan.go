package adapter

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
)

// PlanEach plans n objects, each on its own, side by side
// (parallel.Spread), and returns their changes in order, less those that
// plan returned none of, and every diagnostic. plan must do no I/O and
// write nothing it shares.
func PlanEach(n int, plan func(i int) (*plans.Change, hcl.Diagnostics)) ([]*plans.Change, hcl.Diagnostics) {
	planned := make([]*plans.Change, n)
	found := make([]hcl.Diagnostics, n)
	parallel.Spread(n, func(i int) { planned[i], found[i] = plan(i) })
	var changes []*plans.Change
	var diags hcl.Diagnostics
	for i, c := range planned {
		diags = append(diags, found[i]...)
		if c != nil {
			changes = append(changes, c)
		}
	}
	return changes, diags
}
