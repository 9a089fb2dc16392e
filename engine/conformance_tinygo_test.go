package engine_test

import (
	"os"
	"testing"
)

// TestConformanceCoversTinyGo: under WFHOST_REQUIRE_TINYGO (CI sets it, having built
// testdata/tinygo with .ci/toolchain-tinygo.sh) the conformance suite must have the TinyGo
// build among its fixtures, instead of leaving it out silently when it is missing.
func TestConformanceCoversTinyGo(t *testing.T) {
	for _, fx := range guestFixtures {
		if fx.lang == "tinygo" {
			return
		}
	}
	if os.Getenv("WFHOST_REQUIRE_TINYGO") != "" {
		t.Fatal("testdata/tinygo/examples.wasm is missing and WFHOST_REQUIRE_TINYGO is set: run .ci/toolchain-tinygo.sh (or guest-sdk/go/tinygo/install.sh, then make testdata/tinygo)")
	}
	t.Skip("testdata/tinygo/examples.wasm is missing: the conformance suite does not cover TinyGo (make testdata/tinygo)")
}
