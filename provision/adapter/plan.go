package adapter

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
)

// Diffed is a backend's changes with the fingerprint of the state they
// were planned from: the fingerprint (an encoding of all that was read)
// is worked out when it is first read (plans.DigestWhenRead), from what
// diff must not write.
func Diffed(fingerprint func() string, diff func() ([]*plans.Change, hcl.Diagnostics)) (plans.Planned, hcl.Diagnostics) {
	changes, diags := diff()
	return plans.Planned{Changes: changes, Fingerprint: plans.DigestWhenRead(fingerprint)}, diags
}

// PlanEach plans each of the declarations on its own, side by side
// (parallel.Spread), and returns their changes in the declarations' order, less
// those that plan returned none of, and every diagnostic. plan must do
// no I/O and write nothing it shares.
func PlanEach[D any](declared []D, plan func(D) (*plans.Change, hcl.Diagnostics)) ([]*plans.Change, hcl.Diagnostics) {
	planned := make([]*plans.Change, len(declared))
	found := make([]hcl.Diagnostics, len(declared))
	parallel.Spread(len(declared), func(i int) { planned[i], found[i] = plan(declared[i]) })
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
