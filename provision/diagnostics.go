package provision

import "github.com/hashicorp/hcl/v2"

// Diagnostic is the JSON form of an hcl.Diagnostic.
type Diagnostic struct {
	Severity string     `json:"severity"` // "error" or "warning"
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *DiagRange `json:"range,omitempty"`
}

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
