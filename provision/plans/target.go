package plans

import (
	"fmt"
	"slices"
	"strings"

	"github.com/provision-dev/provision/provision/addrs"
)

// Target keeps the changes of the included addresses (all, when include
// is empty) less the excluded ones. A module instance or a place (an
// agent: its objects) names all the objects in it; an agent left out is
// not read, so its objects are not in the plan. An address may leave out its place
// (agent.<name>. or search.<name>.) when it names one object of the plan;
// a key's without its place is the project's own datacenter's.
// An address that matches no object, or several, is an error, so that a
// typo never silently plans nothing and a short address never hits two
// objects. A kept change brings the changes it needs (a document's
// index), and needing one that exclude leaves out is an error.
func (p *Plan) Target(include, exclude []addrs.Addr) error {
	for i, a := range slices.Concat(include, exclude) {
		var hits []string
		for _, c := range p.Changes {
			if c.Addr.Matches(a) {
				hits = append(hits, c.Addr.String())
			}
		}
		switch {
		case len(hits) == 0 && a.IsPlace() && i >= len(include):
			// An agent left out is not read: none of its objects is planned.
		case len(hits) == 0:
			return fmt.Errorf("%s matches no object of this plan; the objects are: %s", a, p.addrList())
		case len(hits) > 1 && !a.IsModule() && !a.IsPlace(): // a module instance or a place names all its objects
			return fmt.Errorf("%s matches %d objects of this plan (%s); write the one you mean", a, len(hits), strings.Join(hits, ", "))
		}
	}
	if len(include) == 0 && len(exclude) == 0 {
		p.Sort() // -replace and the modules may have moved a change
		return nil
	}
	kept := map[addrs.Addr]bool{}
	byAddr := map[addrs.Addr]*Change{}
	var queue []*Change
	for _, c := range p.Changes {
		byAddr[c.Addr] = c
		if Selected(c.Addr, include, exclude) {
			kept[c.Addr] = true
			queue = append(queue, c)
		}
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		for _, n := range c.Needs {
			need := byAddr[n]
			if need == nil || kept[n] || len(need.Requests) == 0 {
				continue
			}
			if matchesAny(need.Addr, exclude) {
				return fmt.Errorf("%s needs %s, which -exclude leaves out: it must be applied first", c.Addr, n)
			}
			kept[n] = true
			queue = append(queue, need)
		}
	}
	p.Changes = slices.DeleteFunc(p.Changes, func(c *Change) bool { return !kept[c.Addr] })
	p.Sort()
	return nil
}

// InModules puts, on the address of each change, of what it needs and of
// each gate's service, the module instance that declares the object (by
// place, kind and name, else by kind and name), as schema.Config.Modules
// gives them.
func (p *Plan) InModules(modules map[addrs.Addr]addrs.Module) {
	if len(modules) == 0 {
		return
	}
	in := func(a *addrs.Addr) {
		m, ok := modules[addrs.Addr{In: a.In, Kind: a.Kind, Name: a.Name}]
		if !ok {
			m = modules[addrs.Addr{Kind: a.Kind, Name: a.Name}]
		}
		a.Module = m
	}
	for _, c := range p.Changes {
		in(&c.Addr)
		for i := range c.Needs {
			in(&c.Needs[i])
		}
	}
	for i := range p.Gates {
		in(&p.Gates[i].Address)
	}
}

// Selected reports whether -target include (all, when empty) and
// -exclude exclude keep the object at a.
func Selected(a addrs.Addr, include, exclude []addrs.Addr) bool {
	return (len(include) == 0 || matchesAny(a, include)) && !matchesAny(a, exclude)
}

func matchesAny(a addrs.Addr, as []addrs.Addr) bool {
	return slices.ContainsFunc(as, a.Matches)
}

func (p *Plan) addrList() string {
	if len(p.Changes) == 0 {
		return "(none)"
	}
	s := make([]string, len(p.Changes))
	for i, c := range p.Changes {
		s[i] = c.Addr.String()
	}
	return strings.Join(s, ", ")
}
