// Package recipe proves the recipe of a new kind (docs/internals/
// design-notes.md, "A new kind, file by file") in its test: a kind made
// in a package of its own, with its block, its backend and its page, in
// a language of its own, planned and applied by the engine, then by the
// provision command given its language and its backend (cli.Options,
// a connect.Opener) as a binary's main gives them, and repaired by
// provision watch -heal, with no other package touched.
package recipe
