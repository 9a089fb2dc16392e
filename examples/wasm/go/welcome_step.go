//go:build !renamed

package main

// welcomeStep is the welcome mail's step name. The `renamed` build of this module changes it,
// to show what a redeploy that is not replay-compatible does to runs in flight.
const welcomeStep = "send-welcome"
