//go:build !race

package host

// compileMemoryHeadroom is 1 in a normal build: the default bound is what the compile needs,
// five times over (see race_on.go for the race detector's build).
const compileMemoryHeadroom = 1
