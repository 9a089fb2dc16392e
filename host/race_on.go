//go:build race

package host

// compileMemoryHeadroom multiplies the compile worker's default memory bound in a binary built
// with -race. The worker is this executable, and ThreadSanitizer maps shadow memory for every
// byte of heap (its documentation gives five to ten times), which RLIMIT_DATA counts: the
// Go module of the capabilities example compiled within 1 GiB in a normal build and ran out
// of it under -race on a loaded CI machine. A bound set in Config is kept as given, so the
// tests of the bound itself still hold their worker to it.
const compileMemoryHeadroom = 8
