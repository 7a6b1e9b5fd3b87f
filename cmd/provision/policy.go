package main

import (
	"context"
	"fmt"
	"time"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/connect"
)

// policy prints the least-privilege Consul ACL policy the specs need: the
// rules, ready for consul acl policy create -rules @-, or as JSON.
func (c *cli) policy(args []string) int {
	fs := c.flagSet("policy", "policy [options] [DIR]")
	jsonOut := fs.Bool("json", false, "print the policy as JSON: the rules and each permission")
	node := fs.String("node", "", "the node name of the agent that holds the lock, when it cannot be looked up (GET /v1/agent/self needs agent:read)")
	var vf varFlags
	vf.register(fs)
	var nf netFlags
	nf.register(fs, 5*time.Minute)
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	s, diags := c.load(dirArg(pos), vf)
	if diags.HasErrors() {
		c.printDiags(diags, s.parser.Files(), false)
		return exitError
	}
	ctx, cancel := nf.bound(context.Background())
	defer cancel()
	policy, pdiags := connect.MakePolicy(ctx, s.cfg, connect.Options{Env: c.getenv, Deadlines: nf.deadlines()}, *node)
	c.printDiags(append(diags, pdiags...), s.parser.Files(), false)
	if pdiags.HasErrors() {
		return exitError
	}
	perms, rules := policy.Permissions, policy.Rules
	if *jsonOut {
		jsonView{c}.write(struct {
			FormatVersion string               `json:"format_version"`
			Project       string               `json:"project"`
			Rules         string               `json:"rules"`
			Permissions   []connect.Permission `json:"permissions"`
		}{provision.FormatVersion, s.cfg.Project, rules, perms})
		return exitOK
	}
	fmt.Fprintf(c.stdout, "# The Consul ACL policy of project %q (%s), least privilege:\n#   provision policy %s | consul acl policy create -name provision-%s -rules @-\n\n%s",
		s.cfg.Project, dirArg(pos), dirArg(pos), s.cfg.Project, rules)
	return exitOK
}
