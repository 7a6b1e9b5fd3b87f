package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
)

// The project's record of its documents. The dashboard tool writes a
// saved object back whole, built from its type's fields alone: Kibana
// 4.x's SavedObject.serialize (src/ui/public/courier/saved_object/
// saved_object.js) puts each field of the type's mapping and the search
// source meta into the body, and save indexes that body without a
// version, so the marks in a document's source (markField) are gone after
// the first save in the tool. The record is where that save does not
// reach: one document per owned document in recordIndex on the member
// cluster (written by each document's change, in the batch after the
// document's own item, never through the tribe node),
// holding the project, the document's path, the version provision's write
// gave it and whether lifecycle protects it. A plan reads the project's
// records with one search, whatever their number.
//
// A document is the project's when its marks say so, or when the record
// names it and its version is not older than the one the record holds: a
// save in the tool raises the version, while a document deleted and made
// again by hand starts again at version 1 (once Elasticsearch has dropped
// the delete's tombstone, index.gc_deletes, 60 seconds by default) and is
// nobody's.
const (
	recordIndex = ".provision"
	recordType  = "document"
)

// docRecord is the project's record of one of its documents.
type docRecord struct {
	Project   string `json:"project"`
	Index     string `json:"index"`
	Type      string `json:"type"`
	ID        string `json:"id"`
	Version   int64  `json:"version"`
	Protected bool   `json:"protected,omitempty"`
}

func (r docRecord) path() string { return r.Index + "/" + r.Type + "/" + r.ID }

// recordRef is the record document of the document at path: one record
// a document, whichever project owns it, so that the plan of a declared
// document reads any project's record of it with the document itself.
func recordRef(path string) docRef {
	return docRef{recordIndex, recordType, path}
}

// recordItem is the batch item that records the document at ref as the
// project's, at the version the write before it gives the document.
func (t target) recordItem(ref docRef, version int64, protected bool) plans.Request {
	source := map[string]any{"project": t.project, "index": ref.Index, "type": ref.Type, "id": ref.ID, "version": version}
	if protected {
		source["protected"] = true
	}
	return bulkItem("index", recordRef(ref.Index+"/"+ref.Type+"/"+ref.ID), 0, source)
}

// unrecordItem is the batch item that deletes the record of the document
// at path (a record already gone is no error).
func unrecordItem(path string) plans.Request {
	return bulkItem("delete", recordRef(path), 0, nil)
}

// dropIndex deletes the index name and then, in one _bulk request, the
// project's records of the documents it held, which would otherwise own
// a document made again by hand in an index made again. A record already
// gone is no error; the request is not retried.
func dropIndex(f facts, project, name string) []plans.Request {
	out := []plans.Request{deleteIndex(name)}
	var body bytes.Buffer
	for _, path := range slices.Sorted(maps.Keys(f.Records)) {
		if r := f.Records[path]; r.Index == name && r.Project == project {
			body.Write(itemLines(unrecordItem(path))[0])
			body.WriteByte('\n')
		}
	}
	if body.Len() > 0 {
		// The body is NDJSON, sent as is (Text); the plan shows its lines.
		out = append(out, plans.Request{Method: http.MethodPost, Path: bulkPath, Header: ndjsonBody, Body: adapter.RawJSON(body.String()), Text: true})
	}
	return out
}

// isRecordItem says whether a batch item writes a record.
func isRecordItem(r plans.Request) bool {
	_, ref := itemAction(r)
	return ref.Index == recordIndex
}

// owner is the project that owns d: its marks', else the project whose
// record names it at a version not newer than d's; empty for nobody.
func (f facts) owner(d liveDoc) string {
	if o := d.owner(); o != "" {
		return o
	}
	if r, ok := f.Records[d.path()]; ok && d.Version >= r.Version {
		return r.Project
	}
	return ""
}

// protected says whether d's marks or its owner's record protect it.
func (f facts) protected(d liveDoc) bool {
	r, ok := f.Records[d.path()]
	return d.protected() || ok && r.Protected && d.Version >= r.Version
}

// readRecords reads the project's records (into f.Records, made even when
// there are none, so that a later step knows they were read), by one
// search of recordIndex; none when the index does not exist. The project is matched
// as a phrase (the index is made by its first write, with Elasticsearch's
// dynamic mapping, which analyzes strings) and then exactly.
func (b *Backend) readRecords(ctx context.Context, f *facts) error {
	var found struct {
		Shards struct {
			Failed int `json:"failed"`
		} `json:"_shards"`
		Hits struct {
			Total int `json:"total"`
			Hits  []struct {
				Source docRecord `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if f.Records == nil {
		f.Records = map[string]docRecord{}
	}
	// The records of the declared documents come with them, in
	// readDeclared's _mget: the search leaves them out, so that a
	// converged estate's records are read once.
	var query any = map[string]any{"match_phrase": map[string]any{"project": b.project}}
	if declared := b.declaredRecords(f.Indices); len(declared) > 0 {
		query = map[string]any{"bool": map[string]any{"must": query, "must_not": map[string]any{"ids": map[string]any{"type": recordType, "values": declared}}}}
	}
	query = map[string]any{"size": 10000, "query": query}
	err := b.post(ctx, b.es, "/"+recordIndex+"/"+recordType+"/_search", query, &found)
	var status *adapter.StatusError
	if errors.As(err, &status) && status.Code == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if found.Shards.Failed > 0 {
		// Records missed would leave documents unowned, or protected ones
		// unprotected: no plan from a part of them.
		return fmt.Errorf("the search of the project's records in %s failed on %d shards (GET /_cluster/health/%s says why)", recordIndex, found.Shards.Failed, recordIndex)
	}
	if found.Hits.Total > len(found.Hits.Hits) {
		return fmt.Errorf("the project has %d records of documents in %s, more than one search answers (%d): split them over projects", found.Hits.Total, recordIndex, len(found.Hits.Hits))
	}
	for _, h := range found.Hits.Hits {
		if h.Source.Project == b.project {
			f.Records[h.Source.path()] = h.Source
		}
	}
	return nil
}

// declaredRecords are the IDs of the records readDeclared reads with the
// declared documents: those of the documents whose index exists.
func (b *Backend) declaredRecords(indices map[string]liveIndex) []string {
	var ids []string
	for _, d := range b.documents {
		if _, exists := indices[d.Index]; exists {
			ids = append(ids, d.Path())
		}
	}
	return ids
}
