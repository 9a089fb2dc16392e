//go:build appended

package main

import wf "github.com/wfhost/wfhost/guest-sdk/go"

func verifiedStep(ctx *wf.Context, u user) error {
	_, err := wf.Step(ctx, "record-verified", func(*wf.StepContext) (string, error) { return u.ID, nil })
	return err
}

const onboardingVersion = "2"

// chargeOrPauseVersion and chargeStep: see appended_step.go.
const (
	chargeOrPauseVersion = "2"
	chargeStep           = "charge-card"
)
