package consul

import (
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
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// KV is the Consul KV store of the cluster, reached through the agent
// that holds the project's lock: the keys the key blocks declare, read
// with one recursive GET per folder they are in (Consul 1.15's
// /v1/kv/<prefix>?recurse=true), written with a check-and-set against
// the index the plan read, so that a key edited between plan and apply is
// never overwritten.
//
// A key carries provision's ownership mark in its flags, written with the
// value in the same request: the high 16 bits are markMagic and the next
// 16 a digest of the project's name; the low 32 are the flags the key
// block declares. A key without the mark is nobody's; provision never
// deletes a key whose mark is not its project's.
type KV struct {
	agent    *Backend
	project  string
	keys     []*schema.Key
	prefixes []string
	// generate are the imports of keys no block declares.
	generate []*schema.Import
}

var (
	_ provision.Writer    = (*KV)(nil)
	_ provision.Converger = (*KV)(nil)
	_ provision.Permitter = (*KV)(nil)
	_ provision.Generator = (*KV)(nil)
)

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

// NewKV returns the KV backend of the specs' keys, through the cluster's
// agent (the consul block, CONSUL_HTTP_ADDR, else the first agent
// block); nil when the specs declare and import no key.
func NewKV(cfg *schema.Config, o Options) (*KV, hcl.Diagnostics) {
	kv := &KV{project: cfg.Project, keys: cfg.Keys}
	seen := map[string]bool{}
	add := func(prefix string) {
		if !seen[prefix] {
			seen[prefix] = true
			kv.prefixes = append(kv.prefixes, prefix)
		}
	}
	for _, k := range cfg.Keys {
		add(k.Prefix())
	}
	for _, im := range cfg.Imports {
		if im.Kind == "key" && !im.Declared {
			kv.generate = append(kv.generate, im)
			add((&schema.Key{Path: im.Name}).Prefix())
		}
	}
	if len(kv.prefixes) == 0 {
		return nil, nil
	}
	slices.Sort(kv.prefixes)
	// A folder inside another is read with it.
	kv.prefixes = slices.DeleteFunc(kv.prefixes, func(p string) bool {
		return slices.ContainsFunc(kv.prefixes, func(q string) bool { return q != p && strings.HasPrefix(p, q) })
	})
	var a *schema.Agent
	if lockerIsFirstAgent(cfg) {
		a = cfg.Agents[0]
	}
	agent, diags := openConfig(cfg, a, o)
	if agent == nil {
		return nil, diags
	}
	agent.locker = false
	kv.agent = agent
	return kv, diags
}

// Info names the store by the agent it is reached through.
func (kv *KV) Info() plans.BackendInfo {
	return plans.BackendInfo{Name: "kv", Kind: "consul-kv", Address: kv.agent.address(),
		Scope: adapter.RawJSON(struct {
			Project  string   `json:"project"`
			Prefixes []string `json:"prefixes"`
		}{kv.project, kv.prefixes})}
}

// kvState is what a plan reads of the store (its State): every key under
// the folders read, and, under default deny, what the token may write.
type kvState struct {
	Keys map[string]kvEntry `json:"keys"`
	ACL  aclState           `json:"acl"`
}

// kvEntry is one key as Consul answers it: its value (as text, or, when
// it is not UTF-8, base64), flags, and the index of its last change.
type kvEntry struct {
	Value       string `json:"value"`
	Base64      bool   `json:"base64,omitempty"`
	Flags       uint64 `json:"flags"`
	ModifyIndex uint64 `json:"modify_index"`
}

// Version is the version of the Consul the keys are read from.
func (kv *KV) Version(ctx context.Context) string {
	if v := kv.agent.Version(ctx); v != "" {
		return v + " KV"
	}
	return ""
}

// Server is unnamed: GET /v1/kv does not say Consul's version.
func (kvState) Server() string { return "Consul KV" }

// DecodeState reads the store's state from its JSON form.
func (kv *KV) DecodeState(raw json.RawMessage) (plans.State, error) {
	var st kvState
	if err := adapter.DecodeStrict(raw, &st); err != nil {
		return nil, err
	}
	if st.Keys == nil {
		st.Keys = map[string]kvEntry{}
	}
	return st, nil
}

// Read reads every folder of the declared keys, side by side: GET
// /v1/kv/<folder>?recurse=true (a 404 is an empty folder).
func (kv *KV) Read(ctx context.Context, _ plans.Mode) (plans.State, hcl.Diagnostics) {
	st := kvState{Keys: map[string]kvEntry{}}
	type answer struct {
		pairs  []kvPair
		header http.Header
		err    error
	}
	answers := make([]answer, len(kv.prefixes))
	parallel.Do(len(kv.prefixes), 8, func(i int) {
		a := &answers[i]
		a.err = kv.agent.net.Call(ctx, true, func(ctx context.Context) error {
			var err error
			a.header, err = kv.agent.get(ctx, "/v1/kv/"+escapePath(kv.prefixes[i])+"?recurse=true", &a.pairs)
			var se *adapter.StatusError
			if errors.As(err, &se) && se.Code == http.StatusNotFound {
				a.pairs, err = nil, nil
			}
			return err
		})
	})
	for i, a := range answers {
		if a.err != nil {
			return nil, hcl.Diagnostics{kv.agent.unreadable(fmt.Errorf("reading the keys under %q: %w", kv.prefixes[i], a.err))}
		}
		st.ACL.Deny = st.ACL.Deny || a.header.Get("X-Consul-Default-ACL-Policy") == "deny"
		for _, p := range a.pairs {
			e := kvEntry{Flags: p.Flags, ModifyIndex: p.ModifyIndex, Value: string(p.Value)}
			if !utf8.Valid(p.Value) {
				e.Value, e.Base64 = base64.StdEncoding.EncodeToString(p.Value), true
			}
			st.Keys[p.Key] = e
		}
	}
	if st.ACL.Deny {
		if kv.agent.conf.Token == "" {
			return nil, hcl.Diagnostics{kv.agent.noToken()}
		}
		st.ACL.Allowed, st.ACL.Unchecked = kv.agent.ask(ctx, kv.writable(st))
	}
	return st, nil
}

// kvPair is a key as GET /v1/kv answers it (Value is base64 in JSON).
type kvPair struct {
	Key         string
	Flags       uint64
	Value       []byte
	ModifyIndex uint64
}

// writable are the permissions a plan may need: write on every declared
// key and every key of the project's under the folders read.
func (kv *KV) writable(st kvState) []Permission {
	var perms []Permission
	for _, k := range kv.keys {
		perms = append(perms, Permission{Resource: "key", Segment: k.Path, Access: "write"})
	}
	for _, path := range slices.Sorted(maps.Keys(st.Keys)) {
		if kvOwner(st.Keys[path].Flags, kv.project) == kv.project {
			perms = append(perms, Permission{Resource: "key", Segment: path, Access: "write"})
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

func (kv *KV) addr(path string) plans.Addr { return plans.Addr{Kind: "key", Name: path} }

// Plan diffs the declared keys against the store: a value compared as
// text (as JSON when the block writes an object or a list), the flags,
// and the mark.
func (kv *KV) Plan(s plans.State, mode plans.Mode) (provision.Planned, hcl.Diagnostics) {
	st := s.(kvState)
	var changes []*plans.Change
	var diags hcl.Diagnostics
	declared := map[string]bool{}
	for _, k := range kv.keys {
		declared[k.Path] = true
		if mode == plans.Destroy {
			continue
		}
		live, exists := st.Keys[k.Path]
		k, flags := k, kvMark(kv.project)|k.Flags
		c, cdiags := adapter.Propose(kv.project, adapter.Object{
			Declared: adapter.Declared{Addr: kv.addr(k.Path), Noun: "key", Subject: k.PathRange.Ptr(), Context: k.DeclRange.Ptr(), Import: k.Import.At()},
			Backend:  "kv",
			EachKey:  k.Instance.KeyPtr(),
			After:    adapter.RawJSON(keyView(k.Value, k.JSON, k.Flags)),
			Live:     adapter.LiveObject{Exists: exists, Owner: kvOwner(live.Flags, kv.project), What: fmt.Sprintf("a key with flags %d, changed at index %d", live.Flags, live.ModifyIndex)},
			Create:   func() []plans.Request { return []plans.Request{putKey(k.Path, k.Value, flags, 0)} },
			Before:   func() json.RawMessage { return adapter.RawJSON(keyView(live.Value, k.JSON, live.Flags)) },
			Diff: func(importing bool) adapter.Diff {
				var d adapter.Diff
				var changed []string
				if !sameKeyValue(live, k) {
					changed = append(changed, "value")
				}
				if live.Flags&0xffffffff != k.Flags {
					changed = append(changed, "flags")
				}
				if len(changed) > 0 {
					d.Reasons = []adapter.Reason{{Code: plans.ReasonChanged, Words: strings.Join(changed, ", ") + " changed"}}
				}
				if importing || len(changed) > 0 {
					d.Requests = []plans.Request{putKey(k.Path, k.Value, flags, live.ModifyIndex)}
				}
				return d
			},
			Imported: "made outside provision; written again in place with the ownership mark in its flags",
		})
		diags = append(diags, cdiags...)
		if c != nil {
			changes = append(changes, c)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(st.Keys)) {
		e := st.Keys[path]
		if kvOwner(e.Flags, kv.project) != kv.project || declared[path] && mode != plans.Destroy {
			continue
		}
		r := plans.Request{Method: "DELETE", Path: "/v1/kv/" + escapePath(path) + "?cas=" + strconv.FormatUint(e.ModifyIndex, 10), Header: map[string]string{"Accept": "application/json"}}
		changes = append(changes, adapter.Removal(kv.addr(path), "kv", adapter.RawJSON(keyView(e.Value, false, e.Flags)), r).Owned(kv.project, mode))
	}
	return provision.Planned{Changes: changes, Fingerprint: adapter.Digest(st.Keys)}, diags
}

// sameKeyValue compares a live value with the declared one: as JSON when
// the block writes JSON, else as text.
func sameKeyValue(live kvEntry, k *schema.Key) bool {
	if live.Base64 || !k.JSON {
		return !live.Base64 && live.Value == k.Value
	}
	var a, b any
	return json.Unmarshal([]byte(live.Value), &a) == nil && json.Unmarshal([]byte(k.Value), &b) == nil && reflect.DeepEqual(a, b)
}

// putKey writes a key's value, its flags (the mark with them) and, with
// cas, only if the key's index is still cas (0: only if it does not
// exist). Consul answers true or false.
func putKey(path, value string, flags, cas uint64) plans.Request {
	body, _ := json.Marshal(value)
	return plans.Request{Method: "PUT", Path: fmt.Sprintf("/v1/kv/%s?cas=%d&flags=%d", escapePath(path), cas, flags),
		Header: map[string]string{"Accept": "application/json"}, Body: body, Text: true}
}

// escapePath escapes each segment of a key's path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// Send performs one request of a key's change; a check-and-set that
// Consul answers false (the key changed since the plan read it) is an
// error, and nothing was written.
func (kv *KV) Send(ctx context.Context, r plans.Request) error {
	body, err := kv.agent.sender().Send(ctx, r, 4096)
	if err == nil && strings.TrimSpace(string(body)) == "false" {
		path, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/v1/kv/"), "?")
		return fmt.Errorf("the key %s changed since the plan read it (its check-and-set was refused); nothing was written to it. Plan again", path)
	}
	return err
}

// Permit says, from what the read asked the agent, whether the token may
// write every key the changes write or delete.
func (kv *KV) Permit(s plans.State, changes []*plans.Change) hcl.Diagnostics {
	st := s.(kvState)
	if !st.ACL.Deny {
		return nil
	}
	var perms []Permission
	for _, c := range changes {
		if len(c.Requests) > 0 {
			perms = append(perms, Permission{Resource: "key", Segment: c.Addr.Name, Access: "write", Why: c.Action.String() + " " + c.Addr.String(), at: c.DeclRange(), addrs: []plans.Addr{c.Addr}})
		}
	}
	return kv.agent.judgeRead(st.ACL, perms)
}

// Converge is the store once changes are done, as Consul answers the
// next read: a write sets the value and flags at a new index, a delete
// removes the key.
func (kv *KV) Converge(s plans.State, changes []*plans.Change) (plans.State, error) {
	st := s.(kvState)
	next := kvState{Keys: maps.Clone(st.Keys), ACL: st.ACL}
	index := uint64(0)
	for _, e := range st.Keys {
		index = max(index, e.ModifyIndex)
	}
	for _, c := range changes {
		for _, r := range c.Requests {
			switch r.Method {
			case "DELETE":
				delete(next.Keys, c.Addr.Name)
			case "PUT":
				u, err := url.Parse(r.Path)
				if err != nil {
					return nil, err
				}
				flags, _ := strconv.ParseUint(u.Query().Get("flags"), 10, 64)
				var value string
				if err := json.Unmarshal(r.Body, &value); err != nil {
					return nil, fmt.Errorf("%s: %w", c.Addr, err)
				}
				index++
				next.Keys[c.Addr.Name] = kvEntry{Value: value, Flags: flags, ModifyIndex: index}
			}
		}
	}
	return next, nil
}

// Generate writes a key block for each import of a key no block declares,
// from the live key.
func (kv *KV) Generate(ctx context.Context) ([]*hclwrite.Block, hcl.Diagnostics) {
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
		if _, _, refusal := adapter.Decide(kv.project, adapter.Declared{Addr: kv.addr(im.Name), Noun: "key", Import: im.At()},
			adapter.LiveObject{Exists: exists, Owner: kvOwner(e.Flags, kv.project)}); refusal != nil {
			diags = append(diags, refusal)
			continue
		}
		if e.Base64 {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Key value is not text", Subject: im.ToRange.Ptr(),
				Detail: fmt.Sprintf("The key %s holds bytes that are not UTF-8 text, which a key block cannot declare.", im.Name)})
			continue
		}
		blk := hclwrite.NewBlock("key", []string{im.Name})
		blk.Body().SetAttributeValue("value", cty.StringVal(e.Value))
		if f := e.Flags & 0xffffffff; f != 0 {
			blk.Body().SetAttributeValue("flags", cty.NumberUIntVal(f))
		}
		blocks = append(blocks, blk)
	}
	return blocks, diags
}
