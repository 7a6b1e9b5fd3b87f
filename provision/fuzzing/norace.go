//go:build !race

package fuzzing

const raceFactor = 1
