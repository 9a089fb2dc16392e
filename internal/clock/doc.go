// Package clock is the time and the randomness the engine and the embedded store read, injected
// so that a test can move time instead of sleeping (STYLE.md: "No global state"; "time and
// randomness are injected, so a test never sleeps to let time move"). Real is the system's
// clock; Fake is a clock that stands still until a test advances it, firing the timers that
// come due. Rand is the source of the retry jitter, seedable for a test that wants one.
//
// Imports: the standard library only.
package clock
