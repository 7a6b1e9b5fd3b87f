package plans

import "fmt"

// Action is what a change does to one object.
type Action int

const (
	NoOp Action = iota
	Create
	Update
	Delete
	// Import takes over a live object that nobody owns: its requests put
	// the ownership marks on it, with whatever else the declaration
	// changes. It never deletes or recreates the object.
	Import
	// Forget lets go of an object the project owns (a removed block with
	// destroy = false): its requests take the ownership marks off, and
	// the object is left live, as if made by hand.
	Forget
)

var actionNames = [...]string{NoOp: "no-op", Create: "create", Update: "update", Delete: "delete", Import: "import", Forget: "forget"}

func (a Action) String() string { return actionNames[a] }

// Symbol is the one-character mark of the action in the text view.
func (a Action) Symbol() string {
	return [...]string{NoOp: " ", Create: "+", Update: "~", Delete: "-", Import: "<", Forget: "/"}[a]
}

// MarshalText writes the action's name.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads an action's name.
func (a *Action) UnmarshalText(b []byte) error {
	for i, n := range actionNames {
		if n == string(b) {
			*a = Action(i)
			return nil
		}
	}
	return fmt.Errorf("unknown action %q", b)
}

// ReasonCode says why a change is planned, for a program (the JSON's
// "reasons"); the change's Reason says it to a person. A change may have
// several, in the order of its Reason's parts.
type ReasonCode string

const (
	// ReasonChanged: declared fields differ from the live ones (Reason
	// names them).
	ReasonChanged ReasonCode = "changed"
	// ReasonNewType: a declared mapping type is not live.
	ReasonNewType ReasonCode = "new_type"
	// ReasonNewFields: a live mapping type gets new fields or parameters.
	ReasonNewFields ReasonCode = "new_fields"
	// ReasonSettings: dynamic index settings change.
	ReasonSettings ReasonCode = "settings"
	// ReasonMovedAway: the object moves from here to another place (an
	// agent).
	ReasonMovedAway ReasonCode = "moved_away"
	// ReasonUndeclared: the project owns the object and no block declares
	// it any more.
	ReasonUndeclared ReasonCode = "undeclared"
	// ReasonGone: the object was deleted outside provision, and the
	// project's record of it is deleted.
	ReasonGone ReasonCode = "gone"
	// ReasonDestroy: destroy removes what the project owns.
	ReasonDestroy ReasonCode = "destroy"
	// ReasonImport: made outside provision, taken over with an import
	// block.
	ReasonImport ReasonCode = "import"
	// ReasonReplace: registered again in place on request (-replace).
	ReasonReplace ReasonCode = "replace"
	// ReasonRemoved: a removed block names the object (a forget, or a
	// delete with destroy = true).
	ReasonRemoved ReasonCode = "removed"
	// ReasonProtection: the protection written on the object changes
	// (prevent_destroy).
	ReasonProtection ReasonCode = "protection"
	// ReasonRouters: a service's tags change the routers a proxy serves
	// for it (Reason names them: renamed, removed, added).
	ReasonRouters ReasonCode = "routers"
)

// Because adds a reason to the change: its code, and its words to Reason.
func (c *Change) Because(code ReasonCode, words string) {
	c.Reasons = append(c.Reasons, code)
	if c.Reason != "" {
		c.Reason += "; "
	}
	c.Reason += words
}
