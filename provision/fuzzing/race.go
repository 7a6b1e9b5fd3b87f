//go:build race

package fuzzing

// raceFactor lengthens the bound under the race detector.
const raceFactor = 10
