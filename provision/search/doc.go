// Package search is the index and document kinds and the backend for one
// member cluster of an Elasticsearch tribe: it makes the kinds (Index,
// Document, and their blocks) and decodes their blocks (IndexDecl, DocumentDecl), creates
// declared indices and their mapping types on a node of
// that cluster (never on the read-only tribe node), and checks afterwards
// that they show through the tribe node.
//
// A plan reads a cluster with a fixed number of requests whatever the
// number of indices and documents: GET / (version and cluster name), the
// node's settings (a tribe node lists its members there), one GET
// /<indices>, the documents (one _mget, one search) and the marks; and,
// converging, its tribe node's view. What it read is one value (facts),
// which the plan, a snapshot and the convergence check use alike.
// It knows what each server generation turns a declaration into (2.x typed
// mappings, 5.x's string → text/keyword, one type per index from 6.x,
// typeless 7.x), so that a converged cluster plans as no changes.
package search
