package main

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestIntList(t *testing.T) {
	t.Parallel()
	got, err := intList("10, 100,1_000,,10000")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{10, 100, 1000, 10000}; !slices.Equal(got, want) {
		t.Fatalf("intList = %v, want %v", got, want)
	}
	for _, bad := range []string{"10,x", "0", "-5"} {
		if _, err := intList(bad); err == nil {
			t.Errorf("intList(%q): no error", bad)
		}
	}
}

// An unknown scenario is refused before any store is opened.
func TestRunScaleUnknownScenario(t *testing.T) {
	t.Parallel()
	o := options{store: "postgres"}
	o.scale.scenarios = "warp"
	err := runScale(context.Background(), o, nil)
	if err == nil || !strings.Contains(err.Error(), "unknown scenario") {
		t.Fatalf("runScale: %v, want an unknown scenario error", err)
	}
}

// The user id the signals scenario matches on is the onboarding fixture's: "u-" and the first
// six bytes of the lower-cased email's SHA-256, in hex.
func TestOnboardingUser(t *testing.T) {
	t.Parallel()
	if a, b := onboardingUser("User1@Example.com"), onboardingUser("user1@example.com"); a != b || len(a) != 14 || !strings.HasPrefix(a, "u-") {
		t.Fatalf("onboardingUser: %q and %q", a, b)
	}
}
