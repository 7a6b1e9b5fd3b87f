package adapter

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// Ownership is decided here, once, for every backend. An object carries two
// marks: managed-by = "provision" and provision-project = "<project>"
// (Consul service meta, an index's mapping _meta), and a third,
// provision-protected = "true", while its block says prevent_destroy. No
// state file exists: the marks are the only record of whose an object is,
// and the protection outlives the block that wrote it.

// Mark keys, written on everything provision creates.
const (
	ManagedByKey = schema.ManagedByKey
	ProjectKey   = schema.MetaPrefix + "project"
	ProtectedKey = schema.MetaPrefix + "protected"
	toolName     = "provision"
)

// Marks are the ownership marks of project, as a fresh map, with the
// protection when protected.
func Marks(project string, protected bool) map[string]string {
	m := map[string]string{ManagedByKey: toolName, ProjectKey: project}
	if protected {
		m[ProtectedKey] = "true"
	}
	return m
}

// MarkKeys are the keys Marks may write, in order.
var MarkKeys = []string{ManagedByKey, ProjectKey, ProtectedKey}

// ProtectedBy says whether the marks in meta hold the protection.
func ProtectedBy[V any](meta map[string]V) bool {
	s, _ := any(meta[ProtectedKey]).(string)
	return s == "true"
}

// Unmarked is meta without provision's marks, as a fresh map: what a
// forget leaves on the object.
func Unmarked[V any](meta map[string]V) map[string]V {
	out := make(map[string]V, len(meta))
	for k, v := range meta {
		if !slices.Contains(MarkKeys, k) {
			out[k] = v
		}
	}
	return out
}

// OwnerOf reads the marks in meta: the project that owns the object, or ""
// when provision's marks are not there. Values that are not strings (a
// _meta written by another tool may hold objects) are no marks.
func OwnerOf[V any](meta map[string]V) string {
	if s, _ := any(meta[ManagedByKey]).(string); s != toolName {
		return ""
	}
	p, _ := any(meta[ProjectKey]).(string)
	return p
}

// Claim is what a plan may do with one declared object, given its live
// counterpart and the import blocks.
type Claim int

const (
	// ClaimCreate: the object does not exist; it is created.
	ClaimCreate Claim = iota
	// ClaimManage: the object is the project's own; it is diffed.
	ClaimManage
	// ClaimImport: the object exists, nobody owns it, and an import block
	// takes it over: the plan puts the marks on it.
	ClaimImport
	// ClaimRefused: the plan must not touch it; a diagnostic says why.
	ClaimRefused
)

// Declared is what the ownership decision needs to know of a declaration.
type Declared struct {
	Addr    addrs.Addr
	Subject *hcl.Range
	Context *hcl.Range
	// Import is the import block's to attribute, nil without one.
	Import *hcl.Range
	// Lifecycle is the block's lifecycle block.
	Lifecycle schema.Lifecycle
}

// LiveObject is what the ownership decision needs to know of the live object.
type LiveObject struct {
	Exists bool
	Owner  string // OwnerOf its marks
	// Protected: its marks hold the protection.
	Protected bool
	// What names the live object for a person ("a registration named
	// \"gated-api\""), used in diagnostics.
	What string
}

// Decide is the one ownership rule. An object that does not exist is
// created, unless an import block expects it. An object owned by project is
// managed; an import block on it is left over and gets a note. An object
// nobody owns is imported when an import block says so and refused
// otherwise. An object of another project is always refused.
func Decide(project string, d Declared, l LiveObject) (Claim, string, *hcl.Diagnostic) {
	switch {
	case !l.Exists && d.Import != nil:
		return ClaimRefused, "", &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Nothing to import",
			Detail: fmt.Sprintf("The import block names %s, but no such %s exists live, so there is nothing to take over. "+
				"Remove the import block to create it from its declaration.", d.Addr, d.Addr.Kind),
			Subject: d.Import,
			Context: d.Subject,
		}
	case !l.Exists:
		return ClaimCreate, "", nil
	case l.Owner == project:
		if d.Import != nil {
			return ClaimManage, fmt.Sprintf("already owned by project %s: the import block at %s can be removed", project, d.Import), nil
		}
		return ClaimManage, "", nil
	case l.Owner != "":
		return ClaimRefused, "", &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("The %s belongs to another project", d.Addr.Kind),
			Detail: fmt.Sprintf("%s exists live (%s) and carries the marks of the provision project %q, not %q. "+
				"provision never changes, takes over or removes another project's objects, with or without an import block. "+
				"Declare it in project %q's specs, or choose another name.", d.Addr, l.What, l.Owner, project, l.Owner),
			Subject: firstRange(d.Import, d.Subject),
			Context: d.Context,
		}
	case d.Import != nil:
		return ClaimImport, "", nil
	}
	return ClaimRefused, "", &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("The %s exists and provision does not own it", d.Addr.Kind),
		Detail: fmt.Sprintf("%s exists live (%s) without provision's ownership marks: it was made by hand or by another tool. provision never changes what it does not own. "+
			"To take it over, keep this declaration and add an import block:\n\n  import {\n    to = %s\n  }\n\n"+
			"The plan then shows the requests that put the marks on it; nothing is deleted or recreated.", d.Addr, l.What, d.Addr),
		Subject: d.Subject,
		Context: d.Context,
	}
}

func firstRange(rs ...*hcl.Range) *hcl.Range {
	for _, r := range rs {
		if r != nil {
			return r
		}
	}
	return nil
}

// Object is what a kind says of one declared object, for Propose to
// choose its change: how it is declared and what is live, and, as
// functions the engine calls only for the action it chooses, what the
// backend knows of the object's kind (its views, its requests, its
// limits).
type Object struct {
	Declared
	EachKey *string
	// After is the declared object in the backend's terms.
	After func() json.RawMessage
	Live  LiveObject
	// Check finds what the backend cannot make of the declaration
	// whatever is live (a type the server's version lacks); nil: none.
	Check func() hcl.Diagnostics
	// Create are the requests that make the object.
	Create func() []plans.Request
	// Before is the live object in the backend's terms.
	Before func() json.RawMessage
	// SameView: a no-op's Before is its After (what the backend shows of
	// a live object that matches is the declaration, byte for byte): one
	// encoding, of the live object, serves both, worked out when first
	// read (plans.ViewWhenRead). Before must then read only what stays
	// as read: the live state, never changed in place.
	SameView bool
	// Diff compares the live object with the declaration; importing says
	// the change must put the ownership marks on it too.
	Diff func(importing bool) Diff
	// Mark are the requests that write the marks as declared on the
	// owned object, when only its protection changes.
	Mark func() []plans.Request
	// Imported says, for the reason, what an import does.
	Imported string
}

// Diff is how a live object differs from its declaration, as its backend
// sees it.
type Diff struct {
	// Reasons are why it changes, in the order of the reason's parts.
	Reasons []Reason
	// Requests bring the live object to the declaration; none when it
	// matches (and is not imported).
	Requests []plans.Request
	Notes    []string
	// Conflicts are the changes the backend cannot make: error
	// diagnostics at the declaration. The object then gets no change.
	Conflicts hcl.Diagnostics
}

// Reason is one part of a change's reason.
type Reason struct {
	Code  plans.ReasonCode
	Words string
}

// Propose is the one rule that turns a declared object into its change,
// for every kind: whose the live object is (Decide) picks create, import
// or a diff; a diff with requests is an update, one without is a no-op.
// A backend supplies the views, requests and reasons; the action is the
// engine's.
func Propose(project string, o Object) (*plans.Change, hcl.Diagnostics) {
	claim, note, refusal := Decide(project, o.Declared, o.Live)
	if refusal != nil {
		return nil, hcl.Diagnostics{refusal}
	}
	if o.Check != nil {
		if diags := o.Check(); diags.HasErrors() {
			return nil, diags
		}
	}
	c := &plans.Change{
		Addr:       o.Addr,
		DeclaredAt: plans.At(o.Context),
		EachKey:    o.EachKey,
		Requests:   []plans.Request{},
		Protected:  o.Lifecycle.Protects(o.Live.Protected),
		Ignored:    o.Lifecycle.IgnoredPaths(),
	}
	if claim == ClaimManage && o.Import != nil {
		c.RemovableImport = plans.At(o.Import) // said once for the plan, not per object
	} else if note != "" {
		c.Notes = append(c.Notes, note)
	}
	if claim == ClaimCreate {
		c.Action = plans.Create
		c.After = plans.ViewOf(o.After())
		c.Requests = append(c.Requests, o.Create()...)
		return c, nil
	}
	importing := claim == ClaimImport
	d := o.Diff(importing)
	if len(d.Conflicts) > 0 {
		return nil, d.Conflicts
	}
	if importing {
		c.Because(plans.ReasonImport, o.Imported)
	}
	for _, r := range d.Reasons {
		c.Because(r.Code, r.Words)
	}
	c.Requests = append(c.Requests, d.Requests...)
	c.Notes = append(c.Notes, d.Notes...)
	if protect := o.Lifecycle.Protects(o.Live.Protected); !importing && o.Live.Protected != protect {
		if protect {
			c.Because(plans.ReasonProtection, "prevent_destroy written on it")
		} else {
			c.Because(plans.ReasonProtection, "its protection taken off (prevent_destroy = false)")
		}
		if len(c.Requests) == 0 {
			c.Requests = append(c.Requests, o.Mark()...)
		}
	}
	switch {
	case importing:
		c.Action = plans.Import
	case len(c.Requests) > 0:
		c.Action = plans.Update
	default:
		c.Action = plans.NoOp
	}
	if c.Action == plans.NoOp && o.SameView {
		// Only -json and a saved plan read a no-op's sides: a converged
		// plan shown as text encodes none of its objects.
		view := plans.ViewWhenRead(o.Before)
		c.Before, c.After = view, view
	} else {
		c.Before, c.After = plans.ViewOf(o.Before()), plans.ViewOf(o.After())
	}
	return c, nil
}
