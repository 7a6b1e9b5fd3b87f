package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
)

// SnapshotFormat is the version of a snapshot's JSON form; its major
// number changes when a field changes meaning or goes away.
const SnapshotFormat = "1.0"

// Snapshot is the live state of every backend a project's specs declare,
// as one read of each returned it (a Live), recorded to plan from later
// with no network: a plan made from it is the plan the live systems would
// have given then. It holds no secret: the values of sensitive keys and
// of sensitive variables are redacted as in a plan, and credentials are
// never part of a state.
type Snapshot struct {
	FormatVersion string `json:"format_version"`
	Project       string `json:"project"`
	// TakenAt is when the state was read (RFC 3339, UTC, to the second;
	// SOURCE_DATE_EPOCH sets it, for a reproducible file).
	TakenAt  string            `json:"taken_at"`
	Record   *plans.Record     `json:"record,omitempty"`
	Backends []SnapshotBackend `json:"backends"`
	// file is where the snapshot was read from, src what it held (for a
	// diagnostic's position).
	file string
	src  []byte
	// greenfield: nothing is live (see Greenfield).
	greenfield bool
	// read is a live state read already (see Reread).
	read *plans.Live
	// decoded are the states Live has decoded, by backend name: a
	// snapshot that several plans are made from (provision test's runs)
	// is decoded once. States are never changed in place.
	decoded map[string]plans.State
}

// Greenfield is the snapshot of nothing live: every backend the specs
// declare is empty, as its Greenfielder says (or as its state's empty
// JSON object decodes).
func Greenfield() *Snapshot {
	return &Snapshot{FormatVersion: SnapshotFormat, greenfield: true}
}

// Reread is the live state a run has read, to plan other specs from it
// with no network (pull plans the specs it rewrote so): nothing is
// encoded or redacted, and backends are found by name.
func Reread(live *plans.Live) *Snapshot {
	return &Snapshot{FormatVersion: SnapshotFormat, read: live}
}

// A Greenfielder is a Backend that says what it reads when it holds
// nothing: a search cluster still has a version.
type Greenfielder interface {
	Greenfield() plans.State
}

// SnapshotBackend is one backend's state in a snapshot.
type SnapshotBackend struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Address string `json:"address"`
	// Server names the server read and its version, as far as it said.
	Server string          `json:"server,omitempty"`
	State  json.RawMessage `json:"state"`
}

// A Versioner is a Backend whose state does not say the server's
// version: Version asks the server for it, in one request, for a
// snapshot to record ("Consul 1.15.4"); "" when it cannot say.
type Versioner interface {
	Version(ctx context.Context) string
}

// Servers asks each Versioner of backends for its server, by backend
// name.
func Servers(ctx context.Context, backends []Backend) map[string]string {
	out := map[string]string{}
	for _, b := range backends {
		if v, ok := b.(Versioner); ok {
			if s := v.Version(ctx); s != "" {
				out[b.Info().Name] = s
			}
		}
	}
	return out
}

// TakeSnapshot records live, as backends read it, for project; servers
// name the servers whose state does not (Servers); secrets are the values
// of sensitive variables, which it never holds.
func TakeSnapshot(project string, backends []Backend, live *plans.Live, servers map[string]string, at time.Time, secrets []string) (*Snapshot, error) {
	s := &Snapshot{FormatVersion: SnapshotFormat, Project: project, TakenAt: at.UTC().Truncate(time.Second).Format(time.RFC3339), Record: live.Record, Backends: []SnapshotBackend{}}
	redact := plans.Redactor(secrets)
	for _, b := range backends {
		info := b.Info()
		st, ok := live.States[info.Name]
		if !ok {
			continue
		}
		raw, err := json.Marshal(st)
		if err != nil {
			return nil, fmt.Errorf("recording %s: %w", info.Name, err)
		}
		server := st.Server()
		if v := servers[info.Name]; v != "" {
			server = v
		}
		s.Backends = append(s.Backends, SnapshotBackend{Name: info.Name, Kind: info.Kind, Address: info.Address, Server: server,
			State: redact(raw)})
	}
	slices.SortFunc(s.Backends, func(a, b SnapshotBackend) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

// WriteSnapshot writes s, indented, one field a line, for a review.
func WriteSnapshot(path string, s *Snapshot) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadSnapshot reads a snapshot written by WriteSnapshot (or edited by
// hand). A file that is not one is a diagnostic with its line.
func ReadSnapshot(path string) (*Snapshot, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the snapshot", Detail: err.Error() + "."}}
	}
	var s Snapshot
	if err := adapter.DecodeStrict(src, &s); err != nil {
		return nil, hcl.Diagnostics{snapshotError(path, src, 0, "The snapshot is not valid", fmt.Sprintf("%s is not a snapshot written by provision snapshot: %s.", path, jsonError(err)), err)}
	}
	s.file, s.src = path, src
	major, _, _ := strings.Cut(s.FormatVersion, ".")
	want, _, _ := strings.Cut(SnapshotFormat, ".")
	switch {
	case s.FormatVersion == "":
		return nil, hcl.Diagnostics{snapshotError(path, src, 0, "The snapshot is not valid", path+" has no format_version: it is not a snapshot written by provision snapshot.", nil)}
	case major != want:
		return nil, hcl.Diagnostics{snapshotError(path, src, bytes.Index(src, []byte(`"format_version"`)), "Snapshot of another format",
			fmt.Sprintf("%s is a snapshot of format %q; this provision reads format %s.x. Take it again with this version of provision.", path, s.FormatVersion, want), nil)}
	}
	if _, err := time.Parse(time.RFC3339, s.TakenAt); err != nil {
		return nil, hcl.Diagnostics{snapshotError(path, src, bytes.Index(src, []byte(`"taken_at"`)), "The snapshot is not valid", fmt.Sprintf("Its taken_at, %q, is no RFC 3339 time.", s.TakenAt), nil)}
	}
	return &s, nil
}

// Live is the live state the snapshot recorded, decoded by the backends
// that read it; a backend the specs declare that the snapshot lacks is an
// error, as is a state its backend cannot read back.
func (s *Snapshot) Live(project string, backends []Backend) (*plans.Live, hcl.Diagnostics) {
	if s.greenfield {
		live := &plans.Live{States: map[string]plans.State{}}
		for _, b := range backends {
			var st plans.State
			var err error
			if g, ok := b.(Greenfielder); ok {
				st = g.Greenfield()
			} else if st, err = b.DecodeState(json.RawMessage("{}")); err != nil {
				return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No empty state", Detail: fmt.Sprintf("%s: %s.", b.Info().Name, err)}}
			}
			live.States[b.Info().Name] = st
		}
		return live, nil
	}
	if s.read != nil {
		return s.read, nil
	}
	src := s.src
	var diags hcl.Diagnostics
	if s.Project != project {
		return nil, hcl.Diagnostics{snapshotError(s.file, src, bytes.Index(src, []byte(`"project"`)), "Snapshot of another project",
			fmt.Sprintf("%s records project %q, and the specs are project %q.", s.file, s.Project, project), nil)}
	}
	live := &plans.Live{States: map[string]plans.State{}, Record: s.Record}
	for _, b := range backends {
		info := b.Info()
		i := slices.IndexFunc(s.Backends, func(sb SnapshotBackend) bool { return sb.Name == info.Name })
		if i < 0 {
			var have []string
			for _, sb := range s.Backends {
				have = append(have, sb.Name)
			}
			diags = append(diags, snapshotError(s.file, src, 0, "Backend missing from the snapshot",
				fmt.Sprintf("The specs declare the backend %s (%s), which %s does not record (it records %s): take the snapshot again with these specs.", info.Name, info.Address, s.file, orNone(have)), nil))
			continue
		}
		sb := s.Backends[i]
		if sb.Kind != info.Kind {
			diags = append(diags, snapshotError(s.file, src, bytes.Index(src, sb.State), "Backend of another kind in the snapshot",
				fmt.Sprintf("The snapshot records %s as a %s backend; the specs declare a %s.", sb.Name, sb.Kind, info.Kind), nil))
			continue
		}
		if st, ok := s.decoded[sb.Name]; ok {
			live.States[info.Name] = st
			continue
		}
		st, err := b.DecodeState(sb.State)
		if err != nil {
			at := bytes.Index(src, sb.State)
			var se *json.SyntaxError
			var te *json.UnmarshalTypeError
			switch {
			case at >= 0 && errors.As(err, &se):
				at += int(se.Offset)
			case at >= 0 && errors.As(err, &te):
				at += int(te.Offset)
			}
			diags = append(diags, snapshotError(s.file, src, at, "The snapshot is not valid",
				fmt.Sprintf("The state of %s cannot be read back: %s.", sb.Name, jsonError(err)), nil))
			continue
		}
		if k, ok := st.(Known); ok {
			if err := k.Known(); err != nil {
				diags = append(diags, snapshotError(s.file, src, bytes.Index(src, sb.State), "Snapshot of a server provision does not know",
					fmt.Sprintf("The snapshot records %s as %s: %s. A plan from it would not be what that server plans.", sb.Name, st.Server(), err), nil))
				continue
			}
		}
		if s.decoded == nil {
			s.decoded = map[string]plans.State{}
		}
		s.decoded[sb.Name] = st
		live.States[info.Name] = st
	}
	return live, diags
}

// Known is a State that can tell whether provision knows how the server
// it records turns declarations into live objects (the fidelity rules of
// its version); a snapshot of one it does not know is refused.
type Known interface {
	Known() error
}

// Source is what a plan made from s says of it; nil for no snapshot.
func (s *Snapshot) Source() *plans.SnapshotSource {
	if s == nil {
		return nil
	}
	if s.greenfield {
		return &plans.SnapshotSource{Greenfield: true, Servers: []string{}}
	}
	src := &plans.SnapshotSource{File: s.file, TakenAt: s.TakenAt, Servers: []string{}}
	for _, b := range s.Backends {
		server := b.Server
		if server == "" {
			server = b.Kind
		}
		src.Servers = append(src.Servers, fmt.Sprintf("%s: %s at %s", b.Name, server, b.Address))
	}
	return src
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}

// jsonError is err in words, without the offset it may carry.
func jsonError(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// snapshotError is a diagnostic at byte offset at of the snapshot file
// (its start when unknown), or at the offset a JSON error gives.
func snapshotError(path string, src []byte, at int, summary, detail string, err error) *hcl.Diagnostic {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		at = int(se.Offset)
	case errors.As(err, &te):
		at = int(te.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		at = len(src)
	}
	at = max(0, min(at, len(src)))
	pos := hcl.Pos{Line: 1, Column: 1, Byte: at}
	for _, c := range src[:at] {
		if c == '\n' {
			pos.Line++
			pos.Column = 1
		} else {
			pos.Column++
		}
	}
	end := pos
	end.Column++
	end.Byte++
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &hcl.Range{Filename: path, Start: pos, End: end}}
}
