package provision

import (
	"fmt"
	"slices"
)

// Target keeps the changes of the included addresses (all, when include
// is empty) less the excluded ones. An address that matches no object of
// the plan is an error, so that a typo never silently plans nothing.
func (p *Plan) Target(include, exclude []Addr) error {
	known := map[Addr]bool{}
	for _, c := range p.Changes {
		known[c.Addr] = true
	}
	for _, a := range slices.Concat(include, exclude) {
		if !known[a] {
			return fmt.Errorf("%s matches no object of this plan; the objects are: %s", a, p.addrList())
		}
	}
	p.Changes = slices.DeleteFunc(p.Changes, func(c *Change) bool {
		return (len(include) > 0 && !slices.Contains(include, c.Addr)) || slices.Contains(exclude, c.Addr)
	})
	p.sort()
	return nil
}

func (p *Plan) addrList() string {
	s := ""
	for i, c := range p.Changes {
		if i > 0 {
			s += ", "
		}
		s += c.Addr.String()
	}
	if s == "" {
		return "(none)"
	}
	return s
}
