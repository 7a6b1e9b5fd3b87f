// Package kv is the Consul KV store as a backend: the keys the specs'
// key blocks declare, read, planned, written with a check-and-set and
// marked as the project's (Store).
package kv

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul/acl"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// Store is the Consul KV store of the cluster, reached through the agent
// that holds the project's lock: the keys the key blocks declare, read
// with one recursive GET per folder they are in (Consul 1.15's
// /v1/kv/<prefix>?recurse=true), written with a check-and-set against
// the index the plan read, so that a key edited between plan and apply is
// never overwritten.
//
// A key the project writes is its own by two marks. One is in its flags,
// written with the value in the same request: the high 16 bits are
// markMagic and the next 16 a digest of the project's name; the low 32
// are the flags the key block declares. The other is its record,
// provision/keys/<project>/<path>, written right after the key: most
// clients write a key without flags (consul kv put, a plain PUT), which
// takes the first mark off, and the record keeps the key the project's
// for as long as the key is the one it wrote, that is while the key's
// CreateIndex is not newer than the record's ModifyIndex (a key deleted
// and made again by hand is not). A key with neither mark is nobody's;
// provision never changes or deletes a key another project marked.
type Store struct {
	provision.NoCapabilities
	agent   *client.Agent
	project string
	// datacenter is the label of the consul block the keys are in; "" for
	// the project's own. in qualifies their addresses ("consul.dc2").
	datacenter, in string
	keys           []*Decl
	cfg            *schema.Config
	prefixes       []string
	// generate are the imports of keys no block declares.
	generate []*schema.Import
}

var _ provision.Backend = (*Store)(nil)

// KeysPrefix is the KV folder of the records of each project's keys:
// provision/keys/<project>/<path> for the key at <path>.
const KeysPrefix = "provision/keys/"

// markMagic marks a key's flags as provision's: "PR".
const markMagic = 0x5052

// kvMark is the high 32 bits of the flags of project's keys.
func kvMark(project string) uint64 {
	h := fnv.New32a()
	h.Write([]byte(project))
	sum := h.Sum32()
	return markMagic<<48 | uint64(sum^sum>>16)&0xffff<<32
}

// kvOwner is the owner of a key by its flags, in Decide's terms: project
// when its mark is project's, another name (the mark's digest) when it is
// another project's, "" for none.
func kvOwner(flags uint64, project string) string {
	switch {
	case flags>>48 != markMagic:
		return ""
	case flags&^0xffffffff == kvMark(project):
		return project
	}
	return fmt.Sprintf("#%04x", flags>>32&0xffff)
}

// New returns the KV backend of the specs' keys in the datacenter of the
// consul block labelled datacenter ("" for the project's own), to be
// reached through that datacenter's agent (the consul block,
// CONSUL_HTTP_ADDR, else the first agent block: Open). It is nil when
// the specs declare, import and remove no key at all; else each
// datacenter's is read, with or without keys declared there (the
// project's records of its keys there find those whose blocks are gone,
// or moved to another datacenter; another datacenter's agent is checked
// to be in it). The keys a removed block names are looked for in
// each datacenter; an import of a key no block declares, in the
// project's own.
func New(cfg *schema.Config, datacenter string) *Store {
	kv := &Store{project: cfg.Project, cfg: cfg, datacenter: datacenter}
	if datacenter != "" {
		kv.in = "consul." + datacenter
	}
	for _, k := range Keys(cfg) {
		if k.Consul == datacenter {
			kv.keys = append(kv.keys, k)
		}
	}
	seen := map[string]bool{}
	add := func(prefix string) {
		if !seen[prefix] {
			seen[prefix] = true
			kv.prefixes = append(kv.prefixes, prefix)
		}
	}
	for _, k := range kv.keys {
		add(prefix(k.Name))
	}
	for _, im := range cfg.ImportsOf(Key) {
		if !im.Declared && datacenter == "" {
			kv.generate = append(kv.generate, im)
			add(prefix(im.Name))
		}
	}
	for _, r := range cfg.RemovedOfKinds(Key) {
		add(prefix(r.Name))
	}
	elsewhere := slices.ContainsFunc(Keys(cfg), func(k *Decl) bool { return k.Consul != "" })
	if len(kv.prefixes) == 0 && datacenter == "" && !elsewhere {
		return nil
	}
	slices.Sort(kv.prefixes)
	// A folder inside another is read with it.
	kv.prefixes = slices.DeleteFunc(kv.prefixes, func(p string) bool {
		return slices.ContainsFunc(kv.prefixes, func(q string) bool { return q != p && strings.HasPrefix(p, q) })
	})
	return kv
}

// Open reaches the store through agent a.
func (kv *Store) Open(a *client.Agent) { kv.agent = a }

// Info names the store by the agent it is reached through, and by its
// datacenter's consul block when it is another datacenter's
// ("consul.dc2").
func (kv *Store) Info() plans.BackendInfo {
	return plans.BackendInfo{Name: cmp.Or(kv.in, "kv"), Kind: "consul-kv", Address: kv.agent.Address(),
		Scope: adapter.RawJSON(struct {
			Project  string   `json:"project"`
			Prefixes []string `json:"prefixes"`
		}{kv.project, kv.prefixes})}
}

// kvState is what a plan reads of the store (its State): every key under
// the folders read, the project's records of its keys (by the key's
// path), and, under default deny, what the token may write.
type kvState struct {
	Keys    map[string]kvEntry  `json:"keys"`
	Records map[string]kvRecord `json:"records,omitempty"`
	ACL     acl.State           `json:"acl"`
}

// kvEntry is one key as Consul answers it: its value (as text, or, when
// it is not UTF-8, base64), flags, and the indexes of its making and of
// its last change.
type kvEntry struct {
	Value       string `json:"value"`
	Base64      bool   `json:"base64,omitempty"`
	Flags       uint64 `json:"flags"`
	CreateIndex uint64 `json:"create_index,omitempty"`
	ModifyIndex uint64 `json:"modify_index"`
}

// bytes is the entry's value as Consul holds it.
func (e kvEntry) bytes() []byte {
	if e.Base64 {
		b, _ := base64.StdEncoding.DecodeString(e.Value)
		return b
	}
	return []byte(e.Value)
}

// kvRecord is the project's record of one of its keys: the index it was
// written at, and what it says of the key (its value, JSON).
type kvRecord struct {
	ModifyIndex uint64 `json:"modify_index"`
	Protected   bool   `json:"protected,omitempty"`
}

// recordValue is a record's value: what the key's marks say besides the
// owner.
type recordValue struct {
	Protected bool `json:"protected,omitempty"`
}

// owner is the owner of the key at path, in Decide's terms: the project
// whose mark its flags carry, else the project when its record is at
// least as new as the key.
func (st kvState) owner(path, project string) string {
	e := st.Keys[path]
	if o := kvOwner(e.Flags, project); o != "" {
		return o
	}
	if r, ok := st.Records[path]; ok && r.ModifyIndex >= e.CreateIndex {
		return project
	}
	return ""
}

// Version is the version of the Consul the keys are read from.
func (kv *Store) Version(ctx context.Context) string {
	if v := kv.agent.Version(ctx); v != "" {
		return v + " KV"
	}
	return ""
}

// Server is unnamed: GET /v1/kv does not say Consul's version.
func (kvState) Server() string { return "Consul KV" }

// Known: every agent's KV store is alike.
func (kvState) Known() error { return nil }

// DecodeState reads the store's state from its JSON form.
func (kv *Store) DecodeState(dec *json.Decoder) (plans.State, error) {
	var st kvState
	if err := dec.Decode(&st); err != nil {
		return nil, err
	}
	if st.Keys == nil {
		st.Keys = map[string]kvEntry{}
	}
	if st.Records == nil {
		st.Records = map[string]kvRecord{}
	}
	return st, nil
}

// Read reads every folder of the declared keys and the folder of the
// project's records, side by side: GET /v1/kv/<folder>?recurse=true (a
// 404 is an empty folder). A key the records name outside those folders
// (the last block of its folder removed) is then read by itself: it is
// the project's, and a plan deletes or forgets it as any owned key no
// longer declared.
func (kv *Store) Read(ctx context.Context, _ plans.Mode) (plans.State, hcl.Diagnostics) {
	st := kvState{Keys: map[string]kvEntry{}, Records: map[string]kvRecord{}}
	// Another datacenter's agent is checked here; the project's own
	// datacenter's, when it holds the lock, as its lock is taken.
	var checked hcl.Diagnostics
	if kv.datacenter != "" {
		if checked = kv.agent.Datacenter(ctx, kv.agent.Conf.Datacenter); checked.HasErrors() {
			return nil, checked
		}
	}
	if diags := kv.readKeys(ctx, &st, append(slices.Clip(kv.prefixes), kv.recordPath("")), "?recurse=true"); diags != nil {
		return nil, diags
	}
	var elsewhere []string
	for _, path := range slices.Sorted(maps.Keys(st.Records)) {
		if !slices.ContainsFunc(kv.prefixes, func(p string) bool { return strings.HasPrefix(path, p) }) {
			elsewhere = append(elsewhere, path)
		}
	}
	if diags := kv.readKeys(ctx, &st, elsewhere, ""); diags != nil {
		return nil, diags
	}
	if st.ACL.Deny {
		if kv.agent.Conf.Token == "" {
			return nil, hcl.Diagnostics{kv.agent.NoToken()}
		}
		st.ACL.Allowed, st.ACL.Unchecked = acl.Ask(ctx, kv.agent, kv.writable(st))
	}
	return st, checked
}

// readKeys reads into st the keys at paths, side by side, each with the
// query given (?recurse=true: the keys under a folder; a 404 is none);
// the folder of the project's records is read into st.Records.
func (kv *Store) readKeys(ctx context.Context, st *kvState, paths []string, query string) hcl.Diagnostics {
	records := kv.recordPath("")
	type answer struct {
		pairs  []kvPair
		header http.Header
		err    error
	}
	answers := make([]answer, len(paths))
	parallel.Do(len(paths), 8, func(i int) {
		a := &answers[i]
		a.err = kv.agent.Net.Call(ctx, true, func(ctx context.Context) error {
			var err error
			a.header, err = kv.agent.Get(ctx, "/v1/kv/"+escapePath(paths[i])+query, &a.pairs)
			var se *adapter.StatusError
			if errors.As(err, &se) && se.Code == http.StatusNotFound {
				a.pairs, err = nil, nil
			}
			return err
		})
	})
	for i, a := range answers {
		if a.err != nil {
			return hcl.Diagnostics{kv.agent.Unreadable(fmt.Errorf("reading the keys under %q: %w", paths[i], a.err))}
		}
		st.ACL.Deny = st.ACL.Deny || a.header.Get("X-Consul-Default-ACL-Policy") == "deny"
		for _, p := range a.pairs {
			if paths[i] == records {
				var v recordValue
				_ = json.Unmarshal(p.Value, &v) // a record edited into something else still records the key
				st.Records[strings.TrimPrefix(p.Key, records)] = kvRecord{ModifyIndex: p.ModifyIndex, Protected: v.Protected}
				continue
			}
			e := kvEntry{Flags: p.Flags, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex, Value: string(p.Value)}
			if !utf8.Valid(p.Value) {
				e.Value, e.Base64 = base64.StdEncoding.EncodeToString(p.Value), true
			}
			st.Keys[p.Key] = e
		}
	}
	return nil
}

// recordPath is the path of the project's record of the key at path.
func (kv *Store) recordPath(path string) string { return KeysPrefix + kv.project + "/" + path }

// kvPair is a key as GET /v1/kv answers it (Value is base64 in JSON).
type kvPair struct {
	Key         string
	Flags       uint64
	Value       []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// writable are the permissions a plan may need: write on every declared
// key and its record, and on every key of the project's under the folders
// read and its record.
func (kv *Store) writable(st kvState) []acl.Permission {
	var perms []acl.Permission
	for _, k := range kv.keys {
		perms = append(perms, kv.keyPerms(k.Name, "", nil)...)
	}
	for _, path := range slices.Sorted(maps.Keys(st.Keys)) {
		if st.owner(path, kv.project) == kv.project {
			perms = append(perms, kv.keyPerms(path, "", nil)...)
		}
	}
	return perms
}

// keyPerms are the permissions a write of the key at path needs: write on
// the key and on its record.
func (kv *Store) keyPerms(path, why string, c *plans.Change) []acl.Permission {
	perms := []acl.Permission{{Resource: "key", Segment: path, Access: "write", Why: why}, {Resource: "key", Segment: kv.recordPath(path), Access: "write", Why: why + " (its record)"}}
	if c != nil {
		for i := range perms {
			perms[i].At, perms[i].Addrs = c.DeclRange(), []addrs.Addr{c.Addr}
		}
	}
	return perms
}

// view is what a plan shows of a key: its value (parsed, when it is
// JSON) and the flags its block controls.
func keyView(value string, isJSON bool, flags uint64) map[string]any {
	var v any = value
	if isJSON {
		var parsed any
		if json.Unmarshal([]byte(value), &parsed) == nil {
			v = parsed
		}
	}
	return map[string]any{"value": v, "flags": flags & 0xffffffff}
}

func (kv *Store) addr(path string) addrs.Addr { return addrs.Addr{In: kv.in, Kind: Key, Name: path} }

// Plan gives the engine the declared keys and the store's: a value
// compared as text (as JSON when the block writes an object or a list),
// the flags, and the marks.
func (kv *Store) Plan(s plans.State, _ plans.Mode) (provision.Planning, hcl.Diagnostics) {
	st := s.(kvState)
	declared := map[string]schema.Lifecycle{}
	for _, k := range kv.keys {
		declared[k.Name] = k.Lifecycle
	}
	var owned []string
	for _, path := range slices.Sorted(maps.Keys(st.Keys)) {
		if st.owner(path, kv.project) == kv.project {
			owned = append(owned, path)
		}
	}
	return provision.Planning{
		Kinds: provision.Kinds(provision.Objects{
			Kind:     Key,
			Declared: schema.Declarations(kv.keys),
			Owned:    owned,
			Plan:     func(i int) (*plans.Change, hcl.Diagnostics) { return kv.planKey(st, kv.keys[i]) },
			Gone: func(path string, _ int) provision.Gone {
				e := st.Keys[path]
				return provision.Gone{
					Addr: kv.addr(path), Before: adapter.RawJSON(keyView(e.Value, false, e.Flags)),
					Delete: []plans.Request{txn(deleteKey(path, e.ModifyIndex), kv.deleteRecord(path))},
					// The value is written again as it is, with the flags less the mark.
					Forget: func() []plans.Request {
						return writeKey(path, e.bytes(), e.Flags&0xffffffff, e.ModifyIndex, kv.deleteRecord(path))
					},
					Protected: st.Records[path].Protected,
				}
			},
		}),
		Project: kv.project,
		Removed: kv.cfg.Removed,
		Planned: plans.Planned{Fingerprint: plans.DigestWhenRead(func() string { return adapter.Digest([]any{kv.ignoring(st.Keys, declared), st.Records}) })},
	}, nil
}

// planKey is the change of one declared key.
func (kv *Store) planKey(st kvState, k *Decl) (*plans.Change, hcl.Diagnostics) {
	live, exists := st.Keys[k.Name]
	record, recorded := st.Records[k.Name]
	protect := k.Lifecycle.Protects(record.Protected)
	want := keepIgnoredKey(*k, live, exists)
	flags := kvMark(kv.project) | want.Flags
	fresh := recorded && record.ModifyIndex >= live.CreateIndex
	write := func(cas uint64, key bool) []plans.Request {
		var rec []txnOp
		if !exists || !fresh || record.Protected != protect {
			rec = kv.putRecord(want.Name, recordValue{Protected: protect})
		}
		switch {
		case key:
			return writeKey(want.Name, []byte(want.Value), flags, cas, rec...)
		case len(rec) > 0:
			return []plans.Request{txn(rec...)}
		}
		return nil
	}
	return adapter.Propose(kv.project, adapter.Object{
		Declared: adapter.Declared{Addr: kv.addr(k.Name), Subject: k.NameRange.Ptr(), Context: k.DeclRange.Ptr(), Import: k.Import.At(), Lifecycle: k.Lifecycle},
		EachKey:  k.Instance.KeyPtr(),
		After:    func() json.RawMessage { return adapter.RawJSON(keyView(want.Value, want.JSON, want.Flags)) },
		Live: adapter.LiveObject{Exists: exists, Owner: st.owner(k.Name, kv.project), Protected: exists && record.Protected,
			What: fmt.Sprintf("a key with flags %d, changed at index %d", live.Flags, live.ModifyIndex)},
		Create: func() []plans.Request { return write(0, true) },
		Before: func() json.RawMessage { return adapter.RawJSON(keyView(live.Value, want.JSON, live.Flags)) },
		Diff: func(importing bool) adapter.Diff {
			var d adapter.Diff
			var changed []string
			if !sameKeyValue(live, &want) {
				changed = append(changed, "value")
			}
			if live.Flags&0xffffffff != want.Flags {
				changed = append(changed, "flags")
			}
			if !importing && live.Flags&^0xffffffff != flags&^0xffffffff {
				changed = append(changed, "ownership mark (its flags were written without it)")
			}
			if len(changed) > 0 {
				d.Reasons = []adapter.Reason{{Code: plans.ReasonChanged, Words: strings.Join(changed, ", ") + " changed"}}
			}
			if !importing && !fresh {
				d.Reasons = append(d.Reasons, adapter.Reason{Code: plans.ReasonChanged, Words: "its ownership record is written"})
			}
			d.Requests = write(live.ModifyIndex, importing || len(changed) > 0)
			return d
		},
		Mark: func() []plans.Request {
			return []plans.Request{txn(kv.putRecord(want.Name, recordValue{Protected: protect})...)}
		},
		Imported: "made outside provision; written again in place with the ownership mark in its flags, and recorded",
	})
}

// keepIgnoredKey is the declared key with the live value and flags where
// its lifecycle ignores them (a live value that is not text is never
// kept: a key block writes text).
func keepIgnoredKey(k Decl, live kvEntry, exists bool) Decl {
	if !exists {
		return k
	}
	if k.Lifecycle.Ignores("value") && !live.Base64 {
		k.Value, k.JSON = live.Value, false
	}
	if k.Lifecycle.Ignores("flags") {
		k.Flags = live.Flags & 0xffffffff
	}
	return k
}

// ignoring is the keys less what the lifecycle blocks of declared keys
// ignore: what a saved plan's fingerprint takes of them. (A write's
// check-and-set index is in its request, which a saved plan must match.)
func (kv *Store) ignoring(keys map[string]kvEntry, declared map[string]schema.Lifecycle) map[string]kvEntry {
	out, cloned := keys, false
	for path, lc := range declared {
		e, ok := keys[path]
		value, flags := lc.Ignores("value"), lc.Ignores("flags")
		if !ok || !value && !flags {
			continue
		}
		if !cloned {
			out, cloned = maps.Clone(keys), true
		}
		e.ModifyIndex = 0
		if value {
			e.Value, e.Base64 = "", false
		}
		if flags {
			e.Flags &^= 0xffffffff
		}
		out[path] = e
	}
	return out
}

// sameKeyValue compares a live value with the declared one: as JSON when
// the block writes JSON, else as text.
func sameKeyValue(live kvEntry, k *Decl) bool {
	if live.Base64 || !k.JSON {
		return !live.Base64 && live.Value == k.Value
	}
	var a, b any
	return json.Unmarshal([]byte(live.Value), &a) == nil && json.Unmarshal([]byte(k.Value), &b) == nil && reflect.DeepEqual(a, b)
}

// escapePath escapes each segment of a key's path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// Permit says, from what the read asked the agent, whether the token may
// write every key the changes write or delete.
func (kv *Store) Permit(s plans.State, changes []*plans.Change) hcl.Diagnostics {
	st := s.(kvState)
	if !st.ACL.Deny {
		return nil
	}
	var perms []acl.Permission
	for _, c := range changes {
		if len(c.Requests) > 0 {
			perms = append(perms, kv.keyPerms(c.Addr.Name, c.Action.String()+" "+c.Addr.String(), c)...)
		}
	}
	return acl.JudgeRead(kv.agent, st.ACL, perms)
}

// Converge is the store once changes are done, as Consul answers the
// next read: a write sets the value and flags at a new index (a new key
// is made at it), a delete removes the key; the same for the records.
func (kv *Store) Converge(s plans.State, changes []*plans.Change) (plans.State, error) {
	st := s.(kvState)
	next := kvState{Keys: maps.Clone(st.Keys), Records: maps.Clone(st.Records), ACL: st.ACL}
	if next.Records == nil {
		next.Records = map[string]kvRecord{}
	}
	index := uint64(0)
	for _, e := range st.Keys {
		index = max(index, e.ModifyIndex)
	}
	for _, r := range st.Records {
		index = max(index, r.ModifyIndex)
	}
	for _, c := range changes {
		for _, r := range c.Requests {
			index++ // one transaction (or a long value's PUT), one index
			if r.Path != "/v1/txn" {
				u, err := url.Parse(r.Path)
				var value string
				if err == nil {
					err = json.Unmarshal(r.Body, &value)
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %w", c.Addr, err)
				}
				flags, _ := strconv.ParseUint(u.Query().Get("flags"), 10, 64)
				kv.apply(&next, c.Addr.Name, "set", c.Addr.Name, []byte(value), flags, index)
				continue
			}
			ops, err := opsOf(r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Addr, err)
			}
			for _, o := range ops {
				kv.apply(&next, c.Addr.Name, o.KV.Verb, o.KV.Key, o.KV.Value, o.KV.Flags, index)
			}
		}
	}
	return next, nil
}

// apply is next once the operation verb of key (the key at path, or its
// record) is done at index: a set makes the key at index (a new one) or
// moves its index, a delete removes it.
func (kv *Store) apply(next *kvState, path, verb, key string, value []byte, flags, index uint64) {
	isRecord := key == kv.recordPath(path)
	switch {
	case strings.HasPrefix(verb, "delete") && isRecord:
		delete(next.Records, path)
	case strings.HasPrefix(verb, "delete"):
		delete(next.Keys, path)
	case isRecord:
		var v recordValue
		_ = json.Unmarshal(value, &v)
		next.Records[path] = kvRecord{ModifyIndex: index, Protected: v.Protected}
	default:
		made := index
		if e, ok := next.Keys[path]; ok && e.CreateIndex != 0 {
			made = e.CreateIndex
		}
		e := kvEntry{Value: string(value), Flags: flags, CreateIndex: made, ModifyIndex: index}
		if !utf8.Valid(value) {
			e.Value, e.Base64 = base64.StdEncoding.EncodeToString(value), true
		}
		next.Keys[path] = e
	}
}

// Generate writes a key block for each import of a key no block declares,
// from the live key.
func (kv *Store) Generate(ctx context.Context) ([]*hclwrite.Block, hcl.Diagnostics) {
	if len(kv.generate) == 0 {
		return nil, nil
	}
	s, diags := kv.Read(ctx, plans.Converge)
	if diags.HasErrors() {
		return nil, diags
	}
	st := s.(kvState)
	var blocks []*hclwrite.Block
	for _, im := range kv.generate {
		e, exists := st.Keys[im.Name]
		if _, _, refusal := adapter.Decide(kv.project, adapter.Declared{Addr: kv.addr(im.Name), Import: im.At()},
			adapter.LiveObject{Exists: exists, Owner: st.owner(im.Name, kv.project)}); refusal != nil {
			diags = append(diags, refusal)
			continue
		}
		if e.Base64 {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Key value is not text", Subject: im.ToRange.Ptr(),
				Detail: fmt.Sprintf("The key %s holds bytes that are not UTF-8 text, which a key block cannot declare.", im.Name)})
			continue
		}
		blk := hclwrite.NewBlock(Key.Name(), []string{im.Name})
		blk.Body().SetAttributeValue("value", cty.StringVal(e.Value))
		if f := e.Flags & 0xffffffff; f != 0 {
			blk.Body().SetAttributeValue("flags", cty.NumberUIntVal(f))
		}
		blocks = append(blocks, blk)
	}
	return blocks, diags
}

// Follow tells feed each time a key under the folders of the declared
// keys changes: one blocking query per folder (GET
// /v1/kv/<folder>?recurse=true&index=...&wait=...).
func (kv *Store) Follow(ctx context.Context, feed provision.Feed) {
	done := make(chan struct{})
	for _, prefix := range kv.prefixes {
		go func() {
			defer func() { done <- struct{}{} }()
			what := fmt.Sprintf("the keys under %q on %s", prefix, kv.agent.Address())
			client.Follow(ctx, feed, what, what+" changed", nil, func(ctx context.Context, index uint64) (uint64, error) {
				_, meta, err := kv.agent.API.KV().List(prefix, (&api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Minute}).WithContext(ctx))
				if err != nil {
					return 0, err
				}
				return meta.LastIndex, nil
			})
		}()
	}
	for range kv.prefixes {
		<-done
	}
}

// Permissions are what the specs' keys need of a token: write on the
// folder of each key declared or removed, and on the folder of the
// project's records of its keys.
func Permissions(cfg *schema.Config) []acl.Permission {
	var out []acl.Permission
	prefixes := map[string]bool{}
	keys := Keys(cfg)
	for _, k := range keys {
		if p := prefix(k.Name); !prefixes[p] {
			prefixes[p] = true
			out = append(out, acl.Permission{Resource: "key_prefix", Segment: p, Access: "write", Why: "the keys the specs declare under " + strconv.Quote(p), At: k.DeclRange.Ptr()})
		}
	}
	removedKeys := false
	for _, r := range cfg.RemovedOfKinds(Key) {
		removedKeys = true
		if p := prefix(r.Name); !prefixes[p] {
			prefixes[p] = true
			out = append(out, acl.Permission{Resource: "key_prefix", Segment: p, Access: "write", Why: "the keys removed blocks name under " + strconv.Quote(p), At: r.DeclRange.Ptr()})
		}
	}
	if len(keys) > 0 || removedKeys {
		out = append(out, acl.Permission{Resource: "key_prefix", Segment: KeysPrefix + cfg.Project + "/", Access: "write", Why: "the records of the project's keys", At: cfg.ProjectRange.Ptr()})
	}
	return out
}
