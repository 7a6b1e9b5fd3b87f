package plans

import "github.com/hashicorp/hcl/v2"

// Diagnostic is the JSON form of an hcl.Diagnostic.
type Diagnostic struct {
	Severity string     `json:"severity"` // "error" or "warning"
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *DiagRange `json:"range,omitempty"`
	// Addresses are the objects of a diagnostic said once for many (the
	// changes an apply's one cause failed), all of them.
	Addresses []string `json:"addresses,omitempty"`
}

// Addressed is the Extra of a diagnostic said once for many objects:
// their addresses.
type Addressed []string

// DiagRange is where a diagnostic points: 1-based line and column.
type DiagRange struct {
	Filename string  `json:"filename"`
	Start    DiagPos `json:"start"`
	End      DiagPos `json:"end"`
}

// DiagPos is a position in a file.
type DiagPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// JSONDiagnostics converts diagnostics for a JSON view.
func JSONDiagnostics(diags hcl.Diagnostics) []Diagnostic {
	out := make([]Diagnostic, 0, len(diags))
	for _, d := range diags {
		j := Diagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if a, ok := d.Extra.(Addressed); ok {
			j.Addresses = a
		}
		if d.Severity == hcl.DiagWarning {
			j.Severity = "warning"
		}
		if d.Subject != nil {
			j.Range = &DiagRange{
				Filename: d.Subject.Filename,
				Start:    DiagPos{d.Subject.Start.Line, d.Subject.Start.Column},
				End:      DiagPos{d.Subject.End.Line, d.Subject.End.Column},
			}
		}
		out = append(out, j)
	}
	return out
}

// SourceRange is a range of a spec file in a plan's JSON: where an object
// is declared. Positions count lines and columns from 1 and bytes from 0,
// as hcl.Range does.
type SourceRange struct {
	Filename string    `json:"filename"`
	Start    SourcePos `json:"start"`
	End      SourcePos `json:"end"`
}

// SourcePos is a position in a spec file.
type SourcePos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// At is r in a plan's terms; nil for nil.
func At(r *hcl.Range) *SourceRange {
	if r == nil {
		return nil
	}
	return &SourceRange{Filename: r.Filename,
		Start: SourcePos{r.Start.Line, r.Start.Column, r.Start.Byte},
		End:   SourcePos{r.End.Line, r.End.Column, r.End.Byte}}
}

// Range is s as an hcl.Range; nil for nil.
func (s *SourceRange) Range() *hcl.Range {
	if s == nil {
		return nil
	}
	return &hcl.Range{Filename: s.Filename,
		Start: hcl.Pos{Line: s.Start.Line, Column: s.Start.Column, Byte: s.Start.Byte},
		End:   hcl.Pos{Line: s.End.Line, Column: s.End.Column, Byte: s.End.Byte}}
}

// String is the range as a person reads it: gated-api.hcl:4,1-20.
func (s *SourceRange) String() string { return s.Range().String() }
