package main

import (
	"context"
	"fmt"
	"time"

	"github.com/provision-dev/provision/provision/connect"

	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

// policy prints the least-privilege Consul ACL policy the specs need: the
// rules, ready for consul acl policy create -rules @-, or as JSON.
func (c *cli) policy(args []string) int {
	fs := c.flagSet("policy")
	jsonOut := fs.Bool("json", false, "print the policy as JSON: the rules and each permission")
	watch := fs.Bool("watch", false, "add what provision watch needs: write on the key provision/watch/<project>, where its replicas elect the healer")
	node := fs.String("node", "", "the node name of the agent that holds the lock, when it cannot be looked up (GET /v1/agent/self needs agent:read)")
	var pf planFlags
	pf.vars.register(fs)
	pf.net.register(fs, 5*time.Minute)
	pos, code, ok := c.parse(fs, args, 1, &jsonView{o: c.output})
	if !ok {
		return code
	}
	var v policyView = textPolicy{&textView{o: c.output}}
	if *jsonOut {
		v = jsonPolicy{&jsonView{o: c.output}}
	}
	ctx, cancel := pf.net.bound(context.Background())
	defer cancel()
	op := c.operation(run.Policy, dirArg(pos), &pf)
	op.SearchIndices, op.Node, op.Watch = false, *node, *watch
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
	fmt.Fprintf(v.o.stdout, "# The Consul ACL policy of project %q (%s), least privilege:\n#   provision policy %s | consul acl policy create -name provision-%s -rules @-\n\n%s",
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
