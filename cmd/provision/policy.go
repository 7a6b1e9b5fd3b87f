package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/consul"
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
	deleting, ldiags := c.lookUp(ctx, s, &nf, node)
	if diags = append(diags, ldiags...); diags.HasErrors() {
		c.printDiags(diags, s.parser.Files(), false)
		return exitError
	}
	c.printDiags(diags, s.parser.Files(), false)
	perms := consul.Permissions(s.cfg, deleting, *node)
	rules := consul.PolicyRules(perms)
	if *jsonOut {
		jsonView{c}.write(struct {
			FormatVersion string              `json:"format_version"`
			Project       string              `json:"project"`
			Rules         string              `json:"rules"`
			Permissions   []consul.Permission `json:"permissions"`
		}{provision.FormatVersion, s.cfg.Project, rules, perms})
		return exitOK
	}
	fmt.Fprintf(c.stdout, "# The Consul ACL policy of project %q (%s), least privilege:\n#   provision policy %s | consul acl policy create -name provision-%s -rules @-\n\n%s",
		s.cfg.Project, dirArg(pos), dirArg(pos), s.cfg.Project, rules)
	return exitOK
}

// lookUp asks the agents what the specs cannot say: the node name of the
// agent that holds the lock (unless -node gives it), and the names of the
// project's services there that the specs no longer declare, which the
// token must still be allowed to deregister. An agent that cannot be read
// leaves those out, with a warning.
func (c *cli) lookUp(ctx context.Context, s *specs, nf *netFlags, node *string) ([]string, hcl.Diagnostics) {
	k, diags := consul.Locker(s.cfg)
	if diags.HasErrors() {
		return nil, diags
	}
	if k != nil && *node == "" {
		k.SetDeadlines(nf.deadlines())
		name, err := k.NodeName(ctx)
		if err != nil {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot look up the lock's node",
				Detail: fmt.Sprintf("The lock's session is written on the node of %s, whose name is read with GET /v1/agent/self: %s. "+
					"Run provision policy with a token that may read the agent, or give the node's name with -node.", k.Info().Address, err),
				Subject: s.cfg.ProjectRange.Ptr()}}
		}
		*node = name
	}
	bs, bdiags := consul.New(s.cfg)
	if diags = append(diags, bdiags...); diags.HasErrors() {
		return nil, diags
	}
	provision.SetDeadlines(bs, nf.deadlines())
	var deleting []string
	for _, b := range bs {
		owned, err := b.(*consul.Backend).Owned(ctx)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Owned services not looked up",
				Detail:  fmt.Sprintf("Reading %s: %s. The project's services there that the specs no longer declare are not in the policy; deregistering them would be refused.", b.Info().Address, err),
				Subject: s.cfg.ProjectRange.Ptr()})
			continue
		}
		deleting = append(deleting, owned...)
	}
	return deleting, diags
}
