package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
)

// SnapshotFormat is the version of a snapshot's JSON form; its major
// number changes when a field changes meaning or goes away.
const SnapshotFormat = "1.2"

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
	// diagnostic's position), until Live has decoded every state in it:
	// at 100,000 services it is as large as the states decoded from it.
	// projectAt is where its project is given.
	file      string
	src       []byte
	projectAt hcl.Pos
	// greenfield: nothing is live (see Greenfield).
	greenfield bool
	// read is a live state read already (see Reread).
	read *plans.Live
	// decoded are the states Live has decoded, by backend name: a
	// snapshot that several plans are made from (provision test's runs)
	// is decoded once. States are never changed in place.
	decoded map[string]plans.State
	// early is the decode DecodeEarly began, which holds src meanwhile.
	early chan earlyDecode
}

// earlyDecode is what DecodeEarly's decode gives back: its snapshot
// (nil when it found a fault), and the file's bytes unless every state
// in them is decoded.
type earlyDecode struct {
	snap *Snapshot
	src  []byte
}

// StateDecoder decodes the state of one kind of backend without its
// declaration (Backend.DecodeState of any backend of that kind).
type StateDecoder func(*json.Decoder) (plans.State, error)

// DecodeEarly begins decoding the states of the backends whose kind
// decoders names, beside the load of the specs (a large snapshot's
// decode is much of what a plan from it adds to validate); Live takes
// them when the specs declare backends of those names and kinds, and
// decodes the rest itself. A snapshot the early decode finds anything
// wrong with is decoded by Live alone, so that its diagnostics are
// Live's.
func (s *Snapshot) DecodeEarly(decoders map[string]StateDecoder) {
	if s.greenfield || s.read != nil || s.early != nil {
		return
	}
	done := make(chan earlyDecode, 1)
	s.early = done
	e := &Snapshot{file: s.file, src: s.src}
	s.src = nil // the decode's until it is done
	go func() {
		if diags := e.readBackends(func(name, kind string) Backend {
			if d := decoders[kind]; d != nil {
				return standIn{info: plans.BackendInfo{Name: name, Kind: kind}, decode: d}
			}
			return nil
		}); len(diags) > 0 {
			done <- earlyDecode{src: e.src}
			return
		}
		e.letGo()
		done <- earlyDecode{snap: e, src: e.src}
	}()
}

// standIn decodes a state of its kind for DecodeEarly; nothing else of a
// Backend is asked of it.
type standIn struct {
	Backend
	info   plans.BackendInfo
	decode StateDecoder
}

func (b standIn) Info() plans.BackendInfo                          { return b.info }
func (b standIn) DecodeState(d *json.Decoder) (plans.State, error) { return b.decode(d) }

// takeEarly waits for the decode DecodeEarly began and keeps its states
// as decoded.
func (s *Snapshot) takeEarly() {
	if s.early == nil {
		return
	}
	e := <-s.early
	if s.src = e.src; e.snap != nil && s.decoded == nil {
		s.decoded, s.Backends = e.snap.decoded, e.snap.Backends
	}
	s.early = nil
}

// DecodeEntries decodes the next value of dec, a JSON object (or null),
// an entry at a time: each decodes the value of the entry key (with
// dec.Decode, or DecodeEntries again). dec then holds one entry at a
// time in its buffer, not the whole object, which dec.Decode of a
// state of 100,000 services would copy whole (190 MB;
// docs/internals/performance.md). An error of each is an EntryError, so
// that a snapshot's diagnostic points into the entry.
func DecodeEntries(dec *json.Decoder, each func(key string) error) error {
	t, err := dec.Token()
	if err != nil || t == nil {
		return err
	}
	if t != json.Delim('{') {
		if err := skipRest(dec, t); err != nil {
			return err
		}
		return &json.UnmarshalTypeError{Value: fmt.Sprint(t), Type: reflect.TypeFor[map[string]any](), Offset: 1}
	}
	// After a fault the rest of the object is read past, so that dec
	// reads on after it, as dec.Decode would.
	var fault error
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string) // within an object, a token is a key or an error
		at := dec.InputOffset()
		if fault == nil {
			if err := each(key); err != nil {
				fault = &EntryError{KeyEnd: at, Err: err}
			}
		}
		if fault != nil && broken(fault) {
			return fault
		}
		if fault != nil && dec.InputOffset() == at { // its value is unread
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	return fault
}

// skipRest reads past the rest of the value whose first token t was,
// so that dec reads on after it (a scalar is read whole already).
func skipRest(dec *json.Decoder, t json.Token) error {
	for depth := 0; ; {
		switch t {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			return nil
		}
		var err error
		if t, err = dec.Token(); err != nil {
			return err
		}
	}
}

// EntryError is an error of an entry DecodeEntries decoded: KeyEnd is
// where its key ends in dec's input, and a json.UnmarshalTypeError of
// Err counts from just after the key's colon.
type EntryError struct {
	KeyEnd int64
	Err    error
}

func (e *EntryError) Error() string { return e.Err.Error() }
func (e *EntryError) Unwrap() error { return e.Err }

// Greenfield is the snapshot of nothing live: every backend the specs
// declare is empty, as its Greenfield says (or as its state's empty
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

// SnapshotBackend is one backend's state in a snapshot.
type SnapshotBackend struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Address string `json:"address"`
	// Server names the server read and its version, as far as it said.
	Server string          `json:"server,omitempty"`
	State  json.RawMessage `json:"state"`
	// stateAt is where the state starts in the file read, statePos
	// that place as a position.
	stateAt  int
	statePos hcl.Pos
}

// Servers asks each backend for its server's version (Backend.Version),
// by backend name.
func Servers(ctx context.Context, backends []Backend) map[string]string {
	out := map[string]string{}
	for _, b := range backends {
		if s := b.Version(ctx); s != "" {
			out[b.Info().Name] = s
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
// hand): its fields but the backends now, and the backends when Live
// decodes them, so that each state is read once, by its backend and in
// its own type (reading it first as raw JSON, then again in its type,
// scans each state twice: docs/internals/performance.md). A file that is
// not one is a diagnostic with its line.
func ReadSnapshot(path string) (*Snapshot, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the snapshot", Detail: err.Error() + "."}}
	}
	s := &Snapshot{file: path, src: src}
	if at, err := s.readHeader(); err != nil {
		return nil, hcl.Diagnostics{s.notSnapshot(at, err)}
	}
	major, _, _ := strings.Cut(s.FormatVersion, ".")
	want, _, _ := strings.Cut(SnapshotFormat, ".")
	switch {
	case s.FormatVersion == "":
		return nil, hcl.Diagnostics{s.invalid(0, path+" has no format_version: it is not a snapshot written by provision snapshot.")}
	case major != want:
		return nil, hcl.Diagnostics{snapshotError(path, src, bytes.Index(src, []byte(`"format_version"`)), "Snapshot of another format",
			fmt.Sprintf("%s is a snapshot of format %q; this provision reads format %s.x. Take it again with this version of provision.", path, s.FormatVersion, want))}
	}
	if _, err := time.Parse(time.RFC3339, s.TakenAt); err != nil {
		return nil, hcl.Diagnostics{s.invalid(bytes.Index(src, []byte(`"taken_at"`)), fmt.Sprintf("Its taken_at, %q, is no RFC 3339 time.", s.TakenAt))}
	}
	s.projectAt = posAt(src, bytes.Index(src, []byte(`"project"`)))
	return s, nil
}

// readHeader reads the snapshot's fields but its backends, and stops at
// them when it has the others (as provision writes them, the backends
// come last: a field after them is read past their array). On an error
// it returns where in the file it is.
func (s *Snapshot) readHeader() (int, error) {
	dec := strictDecoder(s.src)
	if at, err := delim(dec, s.src, '{'); err != nil {
		return at, err
	}
	backends := false
	for dec.More() {
		key, at, err := nextKey(dec, s.src)
		if err != nil {
			return at, err
		}
		if key != "backends" || backends {
			if at, err := s.field(dec, key); err != nil {
				return at, err
			}
			continue
		}
		if backends = true; s.FormatVersion != "" && s.Project != "" && s.TakenAt != "" {
			return 0, nil
		}
		var skip json.RawMessage
		if at, err := decode(dec, s.src, &skip); err != nil {
			return at, err
		}
	}
	return delim(dec, s.src, '}')
}

// field decodes the snapshot's field key, the next value of dec, but its
// backends (given twice, there).
func (s *Snapshot) field(dec *json.Decoder, key string) (int, error) {
	var v any
	switch key {
	case "format_version":
		v = &s.FormatVersion
	case "project":
		v = &s.Project
	case "taken_at":
		v = &s.TakenAt
	case "record":
		v = &s.Record
	case "backends":
		return valueAt(s.src, int(dec.InputOffset())), errors.New(`the field "backends" is given twice`)
	default:
		return valueAt(s.src, int(dec.InputOffset())), fmt.Errorf("unknown field %q", key)
	}
	return decode(dec, s.src, v)
}

// readBackends reads the snapshot's backends: each one's name, kind,
// address and server, and the state of each of backends (by name) that
// has none decoded yet, decoded by that backend as the file is read. The
// other fields are read again, as they are small. A state that cannot be
// decoded is a diagnostic, and the others are still read; a file that is
// not JSON from some point on stops it there.
func (s *Snapshot) readBackends(backends func(name, kind string) Backend) hcl.Diagnostics {
	dec := strictDecoder(s.src)
	if at, err := delim(dec, s.src, '{'); err != nil {
		return hcl.Diagnostics{s.notSnapshot(at, err)}
	}
	var read []SnapshotBackend
	var diags hcl.Diagnostics
	seen := false
	for dec.More() {
		key, at, err := nextKey(dec, s.src)
		if err == nil && (key != "backends" || seen) {
			at, err = s.field(dec, key)
		} else if err == nil {
			seen = true
			read, diags, at, err = s.readArray(dec, backends)
		}
		if err != nil {
			return append(diags, s.notSnapshot(at, err))
		}
	}
	if at, err := delim(dec, s.src, '}'); err != nil {
		return append(diags, s.notSnapshot(at, err))
	}
	s.Backends = read
	return diags
}

// readArray reads the snapshot's array of backends for readBackends; an
// error stops it, at the place returned.
func (s *Snapshot) readArray(dec *json.Decoder, backends func(name, kind string) Backend) ([]SnapshotBackend, hcl.Diagnostics, int, error) {
	var read []SnapshotBackend
	var diags hcl.Diagnostics
	if at, err := delim(dec, s.src, '['); err != nil {
		return nil, nil, at, err
	}
	for dec.More() {
		if at, err := delim(dec, s.src, '{'); err != nil {
			return nil, diags, at, err
		}
		var sb SnapshotBackend
		var st plans.State
		for dec.More() {
			key, at, err := nextKey(dec, s.src)
			if err != nil {
				return nil, diags, at, err
			}
			switch key {
			case "name":
				at, err = decode(dec, s.src, &sb.Name)
			case "kind":
				at, err = decode(dec, s.src, &sb.Kind)
			case "address":
				at, err = decode(dec, s.src, &sb.Address)
			case "server":
				at, err = decode(dec, s.src, &sb.Server)
			case "state":
				keyEnd := int(dec.InputOffset())
				sb.stateAt = valueAt(s.src, keyEnd)
				sb.statePos = posAt(s.src, sb.stateAt)
				b := s.undecoded(backends, sb)
				if b == nil {
					at, err = decode(dec, s.src, &sb.State)
					break
				}
				if st, err = b.DecodeState(dec); err != nil && !broken(err) {
					st = nil
					diags = append(diags, s.unreadable(sb, errorAt(s.src, keyEnd, err), err))
					err = nil
				}
				at = errorAt(s.src, keyEnd, err)
			default:
				at, err = valueAt(s.src, int(dec.InputOffset())), fmt.Errorf("unknown field %q", key)
			}
			if err != nil {
				return nil, diags, at, err
			}
		}
		if at, err := delim(dec, s.src, '}'); err != nil {
			return nil, diags, at, err
		}
		// A state given before its backend's name or kind (a file edited
		// by hand) is decoded once both are known.
		if b := s.undecoded(backends, sb); st == nil && b != nil && sb.State != nil {
			var err error
			if st, err = b.DecodeState(strictDecoder(sb.State)); err != nil {
				st = nil
				diags = append(diags, s.unreadable(sb, sb.stateAt+errorAt(sb.State, 0, err), err))
			}
		}
		if st != nil {
			if s.decoded == nil {
				s.decoded = map[string]plans.State{}
			}
			s.decoded[sb.Name] = st
		}
		sb.State = nil
		read = append(read, sb)
	}
	at, err := delim(dec, s.src, ']')
	return read, diags, at, err
}

// undecoded is the backend of backends that reads sb's state when that
// state is not decoded yet (nil when it is, or when no backend of that
// name and kind is declared: the state is then only skipped).
func (s *Snapshot) undecoded(backends func(name, kind string) Backend, sb SnapshotBackend) Backend {
	if _, done := s.decoded[sb.Name]; done {
		return nil
	}
	if b := backends(sb.Name, sb.Kind); b != nil && b.Info().Kind == sb.Kind {
		return b
	}
	return nil
}

// unreadable is the diagnostic of sb's state that its backend cannot read
// back.
func (s *Snapshot) unreadable(sb SnapshotBackend, at int, err error) *hcl.Diagnostic {
	return s.invalid(at, fmt.Sprintf("The state of %s cannot be read back: %s.", sb.Name, jsonError(err)))
}

// broken reports whether err leaves a decoder with nothing more to read:
// the file is not JSON from there on.
func broken(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// notSnapshot is the diagnostic of a file that is not a snapshot, err at
// byte at.
func (s *Snapshot) notSnapshot(at int, err error) *hcl.Diagnostic {
	return s.invalid(at, fmt.Sprintf("%s is not a snapshot written by provision snapshot: %s.", s.file, jsonError(err)))
}

// invalid is the diagnostic of a snapshot that is not valid, at byte at.
func (s *Snapshot) invalid(at int, detail string) *hcl.Diagnostic {
	return snapshotError(s.file, s.src, at, "The snapshot is not valid", detail)
}

// Live is the live state the snapshot recorded, decoded by the backends
// that read it; a backend the specs declare that the snapshot lacks is an
// error, as is a state its backend cannot read back.
func (s *Snapshot) Live(project string, backends []Backend) (*plans.Live, hcl.Diagnostics) {
	if s.greenfield {
		live := &plans.Live{States: map[string]plans.State{}}
		for _, b := range backends {
			st := b.Greenfield()
			var err error
			if st == nil {
				st, err = b.DecodeState(strictDecoder([]byte("{}")))
			}
			if err != nil {
				return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No empty state", Detail: fmt.Sprintf("%s: %s.", b.Info().Name, err)}}
			}
			live.States[b.Info().Name] = st
		}
		return live, nil
	}
	if s.read != nil {
		return s.read, nil
	}
	if s.Project != project {
		return nil, hcl.Diagnostics{diagnosticAt(s.file, s.projectAt, "Snapshot of another project",
			fmt.Sprintf("%s records project %q, and the specs are project %q.", s.file, s.Project, project))}
	}
	s.takeEarly()
	byName := map[string]Backend{}
	for _, b := range backends {
		if _, done := s.decoded[b.Info().Name]; !done {
			byName[b.Info().Name] = b
		}
	}
	var diags hcl.Diagnostics
	if s.src != nil && (len(byName) > 0 || s.Backends == nil) {
		if diags = s.readBackends(func(name, _ string) Backend { return byName[name] }); diags.HasErrors() && s.Backends == nil {
			return nil, diags
		}
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
			diags = append(diags, diagnosticAt(s.file, hcl.InitialPos, "Backend missing from the snapshot",
				fmt.Sprintf("The specs declare the backend %s (%s), which %s does not record (it records %s): take the snapshot again with these specs.", info.Name, info.Address, s.file, plans.OrNone(have, "none"))))
			continue
		}
		sb := s.Backends[i]
		if sb.Kind != info.Kind {
			diags = append(diags, diagnosticAt(s.file, sb.statePos, "Backend of another kind in the snapshot",
				fmt.Sprintf("The snapshot records %s as a %s backend; the specs declare a %s.", sb.Name, sb.Kind, info.Kind)))
			continue
		}
		st, ok := s.decoded[sb.Name]
		if !ok {
			continue // its diagnostic is readBackends'
		}
		if err := st.Known(); err != nil {
			diags = append(diags, diagnosticAt(s.file, sb.statePos, "Snapshot of a server provision does not know",
				fmt.Sprintf("The snapshot records %s as %s: %s. A plan from it would not be what that server plans.", sb.Name, st.Server(), err)))
			continue
		}
		live.States[info.Name] = st
	}
	s.letGo()
	return live, diags
}

// letGo lets go of the file's bytes once every state in them is
// decoded: nothing is read from them again, and at 100,000 services they
// are as large as the states.
func (s *Snapshot) letGo() {
	if !slices.ContainsFunc(s.Backends, func(sb SnapshotBackend) bool { _, done := s.decoded[sb.Name]; return !done }) {
		s.src = nil
	}
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

// jsonError is err in words, without the offset it may carry.
func jsonError(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// strictDecoder reads src refusing a field its value's type does not
// have: a misspelt field of a hand-edited snapshot is an error, never a
// value silently left out.
func strictDecoder(src []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	return dec
}

// delim reads the next token of dec, which reads the whole file src, as
// the delimiter want; on an error it returns where in the file it is.
func delim(dec *json.Decoder, src []byte, want json.Delim) (int, error) {
	at := int(dec.InputOffset())
	t, err := dec.Token()
	if err == nil && t != want {
		err = fmt.Errorf("%q expected", want)
	}
	return errorAt(src, at, err), err
}

// nextKey reads the next token of dec, which reads the whole file src, as
// an object's key.
func nextKey(dec *json.Decoder, src []byte) (string, int, error) {
	at := int(dec.InputOffset())
	t, err := dec.Token()
	key, _ := t.(string) // within an object, a token is a key or an error
	return key, errorAt(src, at, err), err
}

// decode decodes the next value of dec, which reads the whole file src,
// into v; on an error it returns where in the file it is.
func decode(dec *json.Decoder, src []byte, v any) (int, error) {
	at := int(dec.InputOffset())
	err := dec.Decode(v)
	return errorAt(src, at, err), err
}

// valueAt is where the next value or token after byte at of src starts
// (past a key's colon).
func valueAt(src []byte, at int) int {
	return len(src) - len(bytes.TrimLeft(src[at:], " \t\r\n:"))
}

// errorAt is where in the file src err arose, a decoder of the whole
// file having returned it when reading on from byte at: the first syntax
// error of the file (a decoder's own offsets count only the bytes of the
// values it decoded), a type error's place in the value after at, or
// where that value starts; 0 for no error.
func errorAt(src []byte, at int, err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var ee *EntryError
	switch {
	case err == nil:
		return 0
	case broken(err):
		if errors.As(json.Unmarshal(src, new(json.RawMessage)), &se) {
			return int(se.Offset)
		}
	case errors.As(err, &ee):
		return errorAt(src, int(ee.KeyEnd), ee.Err)
	case errors.As(err, &te):
		// Its offset counts from just after the key's colon.
		rest := bytes.TrimLeft(src[at:], " \t\r\n")
		return len(src) - len(bytes.TrimPrefix(rest, []byte(":"))) + int(te.Offset)
	}
	return valueAt(src, at)
}

// snapshotError is a diagnostic at byte offset at of the snapshot file
// (its end when past it).
func snapshotError(path string, src []byte, at int, summary, detail string) *hcl.Diagnostic {
	return diagnosticAt(path, posAt(src, at), summary, detail)
}

// posAt is the position of byte offset at of src (its end when past it,
// its start before it).
func posAt(src []byte, at int) hcl.Pos {
	at = max(0, min(at, len(src)))
	line := bytes.LastIndexByte(src[:at], '\n')
	return hcl.Pos{Line: 1 + bytes.Count(src[:at], []byte("\n")), Column: at - line, Byte: at}
}

// diagnosticAt is a diagnostic at pos of the snapshot file path.
func diagnosticAt(path string, pos hcl.Pos, summary, detail string) *hcl.Diagnostic {
	end := pos
	end.Column++
	end.Byte++
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &hcl.Range{Filename: path, Start: pos, End: end}}
}
