//go:build race

package host

// compileHeadroom multiplies the compile worker's default bounds, its memory and its time, in
// a binary built with -race. The worker is this executable, instrumented: ThreadSanitizer maps
// shadow memory for every byte of heap (its documentation gives five to ten times), which
// RLIMIT_DATA counts, and the instrumented compiler runs several times slower. The Go module
// of the capabilities example compiled within 1 GiB in a normal build and ran out of it under
// -race on a loaded CI machine; the examples' Go module took over 2 minutes under -race on a
// machine running fifteen processes on two cores. A bound set in Config is kept as given, so
// the tests of the bounds themselves still hold their worker to them.
const compileHeadroom = 8
