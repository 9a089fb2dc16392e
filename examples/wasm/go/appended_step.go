//go:build !appended

package main

import wf "github.com/wfhost/wfhost/guest-sdk/go"

// verifiedStep is what a verified onboarding does before it returns: nothing in this build.
// The `appended` build adds a step there, to show a redeploy that is replay-compatible: a step
// after every step an open run can have journaled.
func verifiedStep(*wf.Context, user) error { return nil }

// onboardingVersion is the onboarding workflow's version; the `appended` build is version 2.
const onboardingVersion = "1"

// chargeOrPauseVersion and chargeStep are charge-or-pause's version and its charge's step key;
// the `appended` build is version 2 with the step renamed, a version no run of version 1 can
// move to (a resume onto it is refused).
const (
	chargeOrPauseVersion = "1"
	chargeStep           = "charge"
)
