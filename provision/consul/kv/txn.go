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

// txn is the request of one key's change: its operations, a batch item
// of the transactions SendBatch sends. It may be sent again after a lost
// answer only when it holds no check-and-set (a record's write alone).
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

// Send sends one key's change: a batch of one.
func (kv *Store) Send(ctx context.Context, r plans.Request) error {
	return kv.SendBatch(ctx, nil, []plans.Request{r})[0]
}

// SendBatch sends the keys' changes in transactions of at most txnOps
// operations. A transaction is applied whole or not at all: when Consul
// refuses one (409, each failed operation by its index), the changes
// whose operations failed (a check-and-set: the key changed since the
// plan read it) get that error, and the others are sent again, in a new
// transaction, without them. Any other failure is every change's of the
// transaction.
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
	for len(todo) > 0 {
		var again []int
		for _, group := range txnGroups(ops, todo) {
			retry, err := kv.sendTxn(ctx, items, ops, group, errs)
			if err != nil {
				for _, i := range group {
					errs[i] = err
				}
			}
			again = append(again, retry...)
		}
		todo = again
	}
	return errs
}

// txnGroups splits the items todo into runs whose operations fit one
// transaction.
func txnGroups(ops [][]txnOp, todo []int) [][]int {
	var groups [][]int
	n := 0
	for _, i := range todo {
		if len(groups) == 0 || n+len(ops[i]) > txnOps {
			groups, n = append(groups, nil), 0
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
		n += len(ops[i])
	}
	return groups
}

// sendTxn sends the items of group as one transaction. It returns the
// items to send again (those of a refused transaction that did not fail
// themselves: nothing of it was applied), having set errs of those that
// failed, or the error of the whole transaction.
func (kv *Store) sendTxn(ctx context.Context, items []plans.Request, ops [][]txnOp, group []int, errs []error) ([]int, error) {
	var all []txnOp
	owner := map[int]int{} // operation index → item
	idempotent := true
	for _, i := range group {
		for _, o := range ops[i] {
			owner[len(all)] = i
			all = append(all, o)
		}
		idempotent = idempotent && items[i].Idempotent
	}
	r := txn(all...)
	r.Idempotent = idempotent
	_, err := kv.agent.Sender().Send(ctx, r, 1<<20)
	var se *adapter.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusConflict {
		return nil, err
	}
	var answer struct {
		Errors []struct {
			OpIndex int
			What    string
		}
	}
	if json.Unmarshal([]byte(strings.TrimPrefix(se.Message, "consul answered 409: ")), &answer) != nil || len(answer.Errors) == 0 {
		return nil, err
	}
	failed := map[int]bool{}
	for _, e := range answer.Errors {
		i, ok := owner[e.OpIndex]
		if !ok {
			return nil, err
		}
		failed[i] = true
		o := all[e.OpIndex].KV
		if strings.HasSuffix(o.Verb, "cas") {
			errs[i] = fmt.Errorf("the key %s changed since the plan read it (its check-and-set was refused: %s); nothing was written to it. Plan again", o.Key, e.What)
		} else {
			errs[i] = fmt.Errorf("consul refused %s of %s in its transaction: %s", o.Verb, o.Key, e.What)
		}
	}
	var again []int
	for _, i := range group {
		if !failed[i] {
			again = append(again, i)
		}
	}
	return again, nil
}
