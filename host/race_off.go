//go:build !race

package host

// compileHeadroom is 1 in a normal build: the defaults are the bounds (see race_on.go for the
// race detector's build).
const compileHeadroom = 1
