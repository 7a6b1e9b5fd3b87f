package provision

import (
	"fmt"

	"github.com/provision-dev/provision/provision/plans"
)

// A Converger is a Backend that can say, with no I/O, what its live state
// becomes once the requests of its changes are done: what the server does
// with them, as far as its next read shows. provision test holds a second
// plan from that state to be empty, so that a perpetual diff is caught
// before anything is applied.
type Converger interface {
	Converge(st plans.State, changes []*plans.Change) (plans.State, error)
}

// Converged is the live state after every change of p is done, each
// backend's as its Converger says; a backend that is no Converger keeps
// its state (it takes no requests).
func Converged(p *plans.Plan, backends []Backend) (*plans.Live, error) {
	next := &plans.Live{States: map[string]plans.State{}, Record: p.Live.Record}
	for _, b := range backends {
		name := b.Info().Name
		st, ok := p.Live.States[name]
		if !ok {
			continue
		}
		if c, ok := b.(Converger); ok {
			var err error
			if st, err = c.Converge(st, p.ChangesOf(name)); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		next.States[name] = st
	}
	return next, nil
}
