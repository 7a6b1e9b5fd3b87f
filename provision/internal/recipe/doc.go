// Package recipe proves the recipe of a new kind (docs/internals/
// design-notes.md, "A new kind, file by file") in its test: a kind
// registered in a package of its own, with its block, its backend and
// its page, planned and applied by the engine with no other package
// touched.
package recipe
