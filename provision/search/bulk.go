package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
)

// Documents are written with _bulk: each write is one item of a batch
// (its action line, and its source line but for a delete), and the
// engine hands the items that are ready together to SendBatch, at most
// bulkLimit at a time. Each item's outcome is its own: Elasticsearch
// answers every item with a status, and an item refused does not undo
// the others.

// bulkPath is where document writes go: refresh=true makes them visible
// at once to the search by which the next plan finds the project's own.
const bulkPath = "/_bulk?refresh=true"

// bulkLimit is the most documents one batch holds; bulkBytes bounds the
// body of one _bulk request (Elasticsearch's advice is 5 to 15 MB, far
// under http.max_content_length).
const (
	bulkLimit = 500
	bulkBytes = 10 << 20
)

var ndjsonBody = map[string]string{"Accept": "application/json", "Content-Type": "application/x-ndjson"}

// bulkAction is the action line of one item: the document, and the
// version the plan read (0: none, for a create).
type bulkAction struct {
	Index   string `json:"_index"`
	Type    string `json:"_type"`
	ID      string `json:"_id"`
	Version int64  `json:"_version,omitempty"`
}

// bulkItem is the batch item of one write of a document: op is create
// (which fails if the document exists), index at a version (which fails
// if it is not the live one) or delete at a version; source is nil for a
// delete.
func bulkItem(op string, ref docRef, version int64, source map[string]any) plans.Request {
	lines := []any{map[string]bulkAction{op: {ref.Index, ref.Type, ref.ID, version}}}
	if source != nil {
		lines = append(lines, source)
	}
	return plans.Request{Method: http.MethodPost, Path: bulkPath, Header: ndjsonBody, Body: adapter.RawJSON(lines), Batch: true}
}

// itemLines are the lines of a batch item.
func itemLines(r plans.Request) []json.RawMessage {
	var lines []json.RawMessage
	_ = json.Unmarshal(r.Body, &lines)
	return lines
}

// itemAction is a batch item's operation and the document it names.
func itemAction(r plans.Request) (string, docRef) {
	var action map[string]bulkAction
	if lines := itemLines(r); len(lines) > 0 {
		_ = json.Unmarshal(lines[0], &action)
	}
	for op, a := range action {
		return op, docRef{a.Index, a.Type, a.ID}
	}
	return "", docRef{}
}

// bulkResult is Elasticsearch 2.4's answer for one item.
type bulkResult struct {
	Status int `json:"status"`
	Error  *struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	} `json:"error"`
}

// BatchLimit is the most documents one _bulk request holds.
func (b *Backend) BatchLimit() int { return bulkLimit }

// SendBatch sends the items in _bulk requests of at most bulkBytes. A
// request is not sent again when its answer is lost (an item written
// before would then fail its condition); an item that Elasticsearch
// answers 429 (its queue full) or 5xx was not written and is sent again,
// alone with the others that were, after a pause, up to the attempts of
// the deadlines, unless the apply was stopped; an item refused for want
// of a master (a cluster block "no master", unavailable shards: an
// election under way) is sent again until the request deadline has passed
// since the first attempt, as Deadlines.Call waits out elections. A 409
// says what changed since the plan read the document.
func (b *Backend) SendBatch(ctx context.Context, st plans.State, items []plans.Request) []error {
	errs := make([]error, len(items))
	todo := make([]int, len(items))
	for i := range todo {
		todo[i] = i
	}
	pause, start := b.net.Backoff, time.Now()
	for attempt := 1; len(todo) > 0; attempt++ {
		var again []int
		for _, chunk := range bulkChunks(items, todo) {
			var body bytes.Buffer
			for _, i := range chunk {
				for _, line := range itemLines(items[i]) {
					body.Write(line)
					body.WriteByte('\n')
				}
			}
			// The request timeout is for one request of usual size; a
			// bulk request gets a second more per megabyte of its body.
			net := b.net
			net.Request += time.Duration(body.Len()>>20) * time.Second
			out, err := sender(b.es, net).Send(ctx, plans.Request{Method: http.MethodPost, Path: bulkPath, Header: ndjsonBody, Body: body.Bytes()}, 64<<20)
			var answer struct {
				Items []map[string]bulkResult `json:"items"`
			}
			if err == nil && (json.Unmarshal(out, &answer) != nil || len(answer.Items) != len(chunk)) {
				err = fmt.Errorf("elasticsearch answered the _bulk request of %d items with %d item results", len(chunk), len(answer.Items))
			}
			retry := attempt < b.net.Attempts && !adapter.Stopping(ctx)
			waitMaster := time.Since(start)+pause < b.net.Request && !adapter.Stopping(ctx)
			for k, i := range chunk {
				if err != nil {
					errs[i] = err
					continue
				}
				if len(answer.Items[k]) != 1 {
					errs[i] = fmt.Errorf("elasticsearch answered the item with %d results, not one", len(answer.Items[k]))
					continue
				}
				for op, r := range answer.Items[k] {
					switch {
					case r.Status/100 == 2, op == "delete" && r.Status == http.StatusNotFound:
						errs[i] = nil // a delete of what is already gone reaches its goal
					case (r.Status == http.StatusTooManyRequests || r.Status >= 500) && retry,
						r.Status == http.StatusServiceUnavailable && r.Error != nil && masterlessItem(r.Error.Type, r.Error.Reason) && waitMaster:
						again = append(again, i)
					default:
						errs[i] = b.itemRefused(ctx, st, op, items[i], r)
					}
				}
			}
		}
		if todo = again; len(todo) > 0 {
			select {
			case <-time.After(pause):
			case <-ctx.Done():
			}
			pause = min(2*pause, time.Second)
		}
	}
	return errs
}

// masterlessItem says whether a _bulk item was refused for want of a
// master or of a primary shard, as during an election.
func masterlessItem(typ, reason string) bool {
	return typ == "unavailable_shards_exception" || typ == "cluster_block_exception" && strings.Contains(reason, "no master")
}

// bulkChunks splits the items at todo into runs whose lines hold at most
// bulkBytes (an item larger than that goes alone).
func bulkChunks(items []plans.Request, todo []int) [][]int {
	var chunks [][]int
	var chunk []int
	size := 0
	for _, i := range todo {
		if n := len(items[i].Body); len(chunk) > 0 && size+n > bulkBytes {
			chunks, chunk, size = append(chunks, chunk), nil, 0
		}
		chunk = append(chunk, i)
		size += len(items[i].Body)
	}
	if len(chunk) > 0 {
		chunks = append(chunks, chunk)
	}
	return chunks
}

// itemRefused is the error of an item Elasticsearch refused, in its own
// words; a version conflict says what changed since the plan read it.
func (b *Backend) itemRefused(ctx context.Context, st plans.State, op string, item plans.Request, r bulkResult) error {
	reason := "no reason given"
	if r.Error != nil {
		reason = r.Error.Type + ": " + r.Error.Reason
	}
	err := &adapter.StatusError{Code: r.Status, Message: fmt.Sprintf("elasticsearch answered %d %s for the item: %s", r.Status, http.StatusText(r.Status), reason)}
	if r.Status != http.StatusConflict {
		return err
	}
	_, ref := itemAction(item)
	return b.documentChanged(ctx, st, op, ref, err)
}
