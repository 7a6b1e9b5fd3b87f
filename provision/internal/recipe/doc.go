// Package recipe proves the recipe of a new kind (docs/internals/
// design-notes.md, "A new kind, file by file") in its test: a kind made
// in a package of its own, with its block, its backend and its page, in
// a language of its own, planned and applied by the engine, then by a
// run that opens its backend (connect.Opener) and a watcher that repairs
// it, with no other package touched.
package recipe
