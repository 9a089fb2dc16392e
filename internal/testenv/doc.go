// Package testenv gives tests what they share: Await (await.go), the one way a test waits for
// another goroutine or process; the test Postgres (TEST_DATABASE_URL), a fresh
// schema per test that is dropped when the test ends, the committed fixtures and how the
// hostile one must fail (hostile.go), and one host runtime per test process (compiling a
// standard Go guest takes hundreds of milliseconds, and a runtime is safe for concurrent use).
// Only tests and cmd/wfbench (for the hostile runs of its attack mode) import it.
package testenv
