// Package lifecycle gives a set of background loops one start/stop lifecycle: Start once,
// Stop idempotent and safe concurrently with Start and with itself, and Stop returns only when
// every loop has returned. The engine's claimer, heartbeat, notice listener, retention
// sweeper and hand-back retrier all run under one Group, so none of them can outlive a
// shutdown or be started twice (STYLE.md, "Background loops"; River's startstop).
//
// Imports: the standard library only.
package lifecycle
