package kv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
)

// A key's change is one transaction (PUT /v1/txn, Consul's "Transaction"
// endpoint, developer.hashicorp.com/consul/api-docs/txn): the key's
// write or delete and its record's, applied together or not at all, at
// one index. The changes of several keys go in one transaction of at
// most txnOps operations, the endpoint's limit (hashicorp/consul#2921):
// 300 keys are 15 requests, not 600.

// txnOps is the most operations one transaction holds.
const txnOps = 64

// txnBytes is the most bytes of operations one transaction carries:
// Consul 1.15 refuses a body over txn_max_req_len (512 KiB by default;
// agent/txn_endpoint.go) with a 413, and a value is base64 in it, a
// third longer.
const txnBytes = 480 << 10

// bigValue is the longest value a key's transaction carries: a longer one
// is written by itself, PUT /v1/kv/<path>?cas=&flags= (which takes values
// up to kv_max_value_size, 512 KiB), and its record then by a transaction.
const bigValue = 256 << 10

// txnOp is one KV operation of a transaction, as Consul reads it: Value
// is base64 in JSON; Index is the check-and-set's ("cas": 0 sets the key
// only if it does not exist; "delete-cas": the index it must have).
type txnOp struct {
	KV struct {
		Verb  string
		Key   string
		Value []byte `json:",omitempty"`
		Flags uint64 `json:",omitempty"`
		Index uint64 `json:",omitempty"`
	}
}

func op(verb, key string, value []byte, flags, index uint64) txnOp {
	var o txnOp
	o.KV.Verb, o.KV.Key, o.KV.Value, o.KV.Flags, o.KV.Index = verb, key, value, flags, index
	return o
}

// setKey writes a key's value, its flags (the mark with them), only if
// the key's index is still cas (0: only if it does not exist).
func setKey(path string, value []byte, flags, cas uint64) txnOp {
	return op("cas", path, value, flags, cas)
}

// writeKey is the requests that write a key's value and flags with a
// check-and-set against cas, and then rest (its record's operations): one
// transaction, or, for a value longer than bigValue, the key's own PUT
// (Consul answers true or false) and then a transaction of rest.
func writeKey(path string, value []byte, flags, cas uint64, rest ...txnOp) []plans.Request {
	if len(value) <= bigValue {
		return []plans.Request{txn(append([]txnOp{setKey(path, value, flags, cas)}, rest...)...)}
	}
	body, _ := json.Marshal(string(value))
	put := plans.Request{Method: http.MethodPut, Path: fmt.Sprintf("/v1/kv/%s?cas=%d&flags=%d", escapePath(path), cas, flags),
		Header: map[string]string{"Accept": "application/json"}, Body: body, Text: true}
	if len(rest) == 0 {
		return []plans.Request{put}
	}
	return []plans.Request{put, txn(rest...)}
}

// deleteKey deletes a key only if its index is still cas.
func deleteKey(path string, cas uint64) txnOp { return op("delete-cas", path, nil, 0, cas) }

// putRecord writes the project's record of the key at path: the write
// that makes the key the project's whatever its flags. It deletes the
// record and sets it again, so that the record is made anew at the index
// of the transaction: Consul 1.15 keeps a key's index when a write
// leaves its value and flags as they are.
func (kv *Store) putRecord(path string, v recordValue) []txnOp {
	value, _ := json.Marshal(v)
	key := kv.recordPath(path)
	return []txnOp{op("delete", key, nil, 0, 0), op("set", key, value, 0, 0)}
}

// deleteRecord deletes the project's record of the key at path.
func (kv *Store) deleteRecord(path string) txnOp { return op("delete", kv.recordPath(path), nil, 0, 0) }

// txn is the request of operations: one key's change, a batch item of
// the transactions SendBatch sends, or such a transaction. It may be sent
// again after a lost answer only when it holds no check-and-set (a
// record's write alone).
func txn(ops ...txnOp) plans.Request {
	body, _ := json.Marshal(ops)
	idempotent := true
	for _, o := range ops {
		if strings.HasSuffix(o.KV.Verb, "cas") {
			idempotent = false
		}
	}
	return plans.Request{Method: http.MethodPut, Path: "/v1/txn", Header: map[string]string{"Accept": "application/json", "Content-Type": "application/json"},
		Body: body, Idempotent: idempotent, Batch: true}
}

// opsOf are the operations of a key's request.
func opsOf(r plans.Request) ([]txnOp, error) {
	var ops []txnOp
	if err := json.Unmarshal(r.Body, &ops); err != nil {
		return nil, fmt.Errorf("the transaction of %s %s: %w", r.Method, r.Path, err)
	}
	return ops, nil
}

// BatchLimit is the most keys' changes one batch of the apply holds: as
// many as one transaction holds of the largest (a key's write and its
// record's, three operations), so that a batch is one request.
func (kv *Store) BatchLimit() int { return txnOps / 3 }

// Send sends one request of a key's change: a transaction (a batch of
// one), or the PUT of a long value, whose check-and-set Consul answers
// false when the key changed since the plan read it.
func (kv *Store) Send(ctx context.Context, r plans.Request) error {
	if r.Path == "/v1/txn" {
		return kv.SendBatch(ctx, nil, []plans.Request{r})[0]
	}
	body, err := kv.agent.Sender().Send(ctx, r, 4096)
	if err == nil && strings.TrimSpace(string(body)) == "false" {
		path, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/v1/kv/"), "?")
		return fmt.Errorf("the key %s changed since the plan read it (its check-and-set was refused); nothing was written to it. Plan again", path)
	}
	return err
}

// SendBatch sends the keys' changes in transactions of at most txnOps
// operations and txnBytes bytes. A transaction is applied whole or not at
// all: when Consul refuses one (409, each failed operation by its index:
// a check-and-set whose key changed since the plan read it), the changes
// whose operations failed get that error and the others of it are not
// written (a re-run writes them); as after any failure of the apply, no
// transaction is sent after it, nor once the apply is stopped.
func (kv *Store) SendBatch(ctx context.Context, _ plans.State, items []plans.Request) []error {
	errs := make([]error, len(items))
	ops := make([][]txnOp, len(items))
	var todo []int
	for i, r := range items {
		var err error
		if ops[i], err = opsOf(r); err != nil {
			errs[i] = err
			continue
		}
		todo = append(todo, i)
	}
	var failed error
	for _, group := range txnGroups(items, ops, todo) {
		if failed == nil && adapter.Stopping(ctx) {
			failed = errors.New("the apply stopped")
		}
		if failed != nil {
			for _, i := range group {
				errs[i] = fmt.Errorf("not sent: %w before its transaction; a re-run writes it", failed)
			}
			continue
		}
		failed = kv.sendTxn(ctx, items, ops, group, errs)
	}
	return errs
}

// txnGroups splits the items todo into runs whose operations fit one
// transaction.
func txnGroups(items []plans.Request, ops [][]txnOp, todo []int) [][]int {
	var groups [][]int
	n, size := 0, 0
	for _, i := range todo {
		if len(groups) == 0 || n+len(ops[i]) > txnOps || size+len(items[i].Body) > txnBytes {
			groups, n, size = append(groups, nil), 0, 0
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
		n += len(ops[i])
		size += len(items[i].Body)
	}
	return groups
}

// sendTxn sends the items of group as one transaction and sets their
// errors: each one's own when Consul refuses it for some of them, that of
// the whole otherwise. It returns the transaction's failure, nil when it
// was applied.
func (kv *Store) sendTxn(ctx context.Context, items []plans.Request, ops [][]txnOp, group []int, errs []error) error {
	var all []txnOp
	owner := map[int]int{} // operation index → item
	for _, i := range group {
		for _, o := range ops[i] {
			owner[len(all)] = i
			all = append(all, o)
		}
	}
	// Consul's answer to a refused transaction, kept as it came: its
	// Errors say which operations failed.
	s := kv.agent.Sender()
	var conflict []byte
	refuse := s.Refuse
	s.Refuse = func(code int, status string, body []byte) error {
		if code == http.StatusConflict {
			conflict = body
		}
		return refuse(code, status, body)
	}
	_, err := s.Send(ctx, txn(all...), 1<<20)
	if err == nil {
		return nil
	}
	failed := refusedOps(conflict, all, owner)
	for _, i := range group {
		switch {
		case failed == nil:
			errs[i] = err
		case failed[i] != nil:
			errs[i] = failed[i]
		default:
			errs[i] = errors.New("not written: another key of its transaction changed since the plan read it, and Consul applies a transaction whole or not at all; a re-run writes it")
		}
	}
	return err
}

// refusedOps are the errors of the items whose operations Consul refused
// in a transaction it answered 409 with conflict (its Errors, each with
// its OpIndex), by item; nil when there is no such answer.
func refusedOps(conflict []byte, all []txnOp, owner map[int]int) map[int]error {
	var answer struct {
		Errors []struct {
			OpIndex int
			What    string
		}
	}
	if json.Unmarshal(conflict, &answer) != nil || len(answer.Errors) == 0 {
		return nil
	}
	failed := map[int]error{}
	for _, e := range answer.Errors {
		i, ok := owner[e.OpIndex]
		if !ok {
			return nil
		}
		o := all[e.OpIndex].KV
		if strings.HasSuffix(o.Verb, "cas") {
			failed[i] = fmt.Errorf("the key %s changed since the plan read it (its check-and-set was refused: %s); nothing was written to it. Plan again", o.Key, e.What)
		} else {
			failed[i] = fmt.Errorf("consul refused %s of %s in its transaction: %s", o.Verb, o.Key, e.What)
		}
	}
	return failed
}
