package provision

import (
	"fmt"

	"github.com/provision-dev/provision/provision/plans"
)

// Converged is the live state after every change of p is done, each
// backend's as its Converge says (Backend.Converge).
func Converged(p *plans.Plan, backends []Backend) (*plans.Live, error) {
	next := &plans.Live{States: map[string]plans.State{}, Record: p.Live.Record}
	for _, b := range backends {
		name := b.Info().Name
		st, ok := p.Live.States[name]
		if !ok {
			continue
		}
		var err error
		if st, err = b.Converge(st, p.ChangesOf(name)); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		next.States[name] = st
	}
	return next, nil
}
