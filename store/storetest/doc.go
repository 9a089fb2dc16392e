// Package storetest is the conformance suite every store.Store implementation must pass:
// store/postgres and store/embedded. A behaviour the engine relies on belongs here,
// written once, so that the implementations cannot drift apart.
//
// Call Exercise from the implementation's own test with a constructor that returns a fresh,
// empty, migrated store for each subtest (a schema of its own, a temporary file, ...). The
// subtests run in parallel and never share a store, so cross-tenant scheduler calls
// (ClaimRuns, NextWakeup) only ever see the subtest's own runs.
//
// Where the suite needs the store's time to pass (a lease to run out, a retention to pass),
// fixture.pass moves it: ExerciseOnClock gives a store that takes an injected clock (the
// embedded one) a clock.Fake to move; Exercise sleeps, for a store whose clock is the
// database's (Postgres), which no test can move.
//
// Imports: store, abi, internal/clock and the standard library (testing included); no
// assertion library, no implementation package.
package storetest
