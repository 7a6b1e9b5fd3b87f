package cli

import (
	"context"
	"fmt"

	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

// policy prints the least-privilege Consul ACL policy the specs need: the
// rules, ready for consul acl policy create -rules -, or as JSON.
func (c *cli) policy(args []string) int {
	var a policyArgs
	pos, code, ok := c.args("policy", &a, args, 1, &jsonView{o: c.output})
	if !ok {
		return code
	}
	var v policyView = textPolicy{&textView{o: c.output}}
	if a.view.json {
		v = jsonPolicy{&jsonView{o: c.output}}
	}
	ctx, cancel := a.run.net.bound(context.Background())
	defer cancel()
	op := c.operation(run.Policy, dirArg(pos), &a.run)
	op.Node, op.Watch = a.node, a.watch
	r := op.Start(ctx, v)
	if r.Failed() {
		return exitError
	}
	v.policy(r, dirArg(pos))
	return exitOK
}

// policyView shows the policy made, and the warnings it was made with.
type policyView interface {
	run.View
	policy(r *run.Run, dir string)
}

type textPolicy struct{ *textView }

func (v textPolicy) policy(r *run.Run, dir string) {
	v.Diagnostics(r.Warnings)
	fmt.Fprintf(v.o.stdout, "# The Consul ACL policy of project %q (%s), least privilege:\n#   provision policy %s | consul acl policy create -name provision-%s -rules -\n\n%s",
		r.Config.Project, dir, dir, r.Config.Project, r.Policy.Rules)
}

type jsonPolicy struct{ *jsonView }

func (v jsonPolicy) policy(r *run.Run, _ string) {
	v.write(struct {
		FormatVersion string `json:"format_version"`
		Project       string `json:"project"`
		connect.Policy
		Diagnostics []plans.Diagnostic `json:"diagnostics,omitempty"`
	}{plans.FormatVersion, r.Config.Project, r.Policy, plans.JSONDiagnostics(v.o.hide(r.Warnings))})
}
