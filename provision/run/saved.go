package run

import (
	"bytes"

	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
)

// matchSaved checks a saved plan against the plan made now, both
// redacted: the backends must be the ones the specs and the environment
// resolve to now (credentials only ever go to those), with the live state
// the plan was made from, and a plan made again from the specs must hold,
// for every change of the saved plan, exactly its requests. It returns
// why the saved plan cannot be applied, in sentences for the refusal's
// detail; "" when it can.
func matchSaved(saved, now *plans.Plan) string {
	if saved.FormatVersion != now.FormatVersion {
		return fmt.Sprintf("It was made by another version of provision (format %s; this one writes %s), whose requests are not comparable with this one's.", saved.FormatVersion, now.FormatVersion)
	}
	if saved.Project != now.Project {
		return fmt.Sprintf("It is a plan of project %q, and the specs in %s are project %q.", saved.Project, saved.Dir, now.Project)
	}
	if saved.Sources != nil && now.Sources != nil {
		if moved := saved.Sources.Moved(now.Sources); moved != "" {
			return fmt.Sprintf("The specs or the variables are not the ones it was made from: %s. A saved plan applies only to what it was reviewed from.", moved)
		}
	}
	live := map[string]plans.BackendInfo{}
	for _, b := range now.Backends {
		live[b.Name] = b
		if !slices.ContainsFunc(saved.Backends, func(sb plans.BackendInfo) bool { return sb.Name == b.Name }) {
			return fmt.Sprintf("The specs name the backend %s, which the plan does not.", b.Name)
		}
	}
	for _, b := range saved.Backends {
		cur, ok := live[b.Name]
		switch {
		case !ok:
			return fmt.Sprintf("It names the backend %s at %s, which the specs no longer declare: its objects cannot be read now, and the plan's requests there are not sent. "+
				"Plan again; the plan warns about what the project left there.", b.Name, b.Address)
		case cur.Kind != b.Kind || !sameNodes(cur.Address, b.Address):
			return fmt.Sprintf("It names the backend %s at %s, but the specs and the environment resolve %s to %q. "+
				"Credentials are only ever sent to the backends the specs name.", b.Name, b.Address, b.Name, cur.Address)
		case compactJSON(cur.Scope) != compactJSON(b.Scope):
			return fmt.Sprintf("Its scope for %s (project, declared objects, datacenter) is %s, and the specs and the environment now give %s.", b.Name, compactJSON(b.Scope), compactJSON(cur.Scope))
		case !cur.Fingerprint.Equal(b.Fingerprint):
			return fmt.Sprintf("The live state of %s (%s) changed since the plan was made, so its requests may no longer be right "+
				"(a plan is also stale once it has been applied).", b.Name, b.Address)
		}
	}
	planned := map[addrs.Addr]*plans.Change{}
	for _, ch := range now.Changes {
		planned[ch.Addr] = ch
	}
	for _, ch := range saved.Changes {
		cur := planned[ch.Addr]
		if cur == nil || cur.Action != ch.Action || cur.Backend != ch.Backend || !sameRequests(cur.Requests, ch.Requests) {
			return fmt.Sprintf("Its change of %s is not what the specs in %s plan now against the same live state: "+
				"the plan file was edited, or the specs or the variables differ from the plan's (give apply the same -var and -var-file).", ch.Addr, saved.Dir)
		}
	}
	return ""
}

// compactJSON is raw without insignificant space, so that JSON indented in
// a saved plan compares with the compact form.
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

func sameRequests(a, b []plans.Request) bool {
	return slices.EqualFunc(a, b, func(x, y plans.Request) bool {
		ja, _ := json.Marshal(x)
		jb, _ := json.Marshal(y)
		return string(ja) == string(jb)
	})
}

// sameNodes compares two backends' addresses as sets: a cluster named by
// several nodes ("http://a:9200,http://b:9200") is the same cluster
// whatever their order.
func sameNodes(a, b string) bool {
	as, bs := strings.Split(a, ","), strings.Split(b, ",")
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}
