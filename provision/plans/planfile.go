package plans

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/provision-dev/provision/provision/addrs"
)

// WritePlanFile saves p as JSON in its redacted form (no secret is ever
// written), readable only by its owner all the same: it holds the exact
// request bodies otherwise.
func WritePlanFile(path string, p *Plan) error {
	b, err := MarshalJSON(p.Redacted(), "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600) // WriteFile keeps the mode of a file that exists
}

// ReadPlanFile reads a plan saved by WritePlanFile, its addresses of
// kinds, refusing one of another major format version.
func ReadPlanFile(path string, kinds addrs.Set) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s is not a saved plan: %w", path, err)
	}
	if err := kinds.Resolve(&p); err != nil {
		return nil, fmt.Errorf("%s is not a saved plan: %w", path, err)
	}
	major, _, _ := strings.Cut(p.FormatVersion, ".")
	want, _, _ := strings.Cut(FormatVersion, ".")
	if major != want {
		return nil, fmt.Errorf("%s is a plan of format version %q; this provision reads format %s.x", path, p.FormatVersion, want)
	}
	return &p, nil
}
