package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type onboardingInput struct {
	Email           string `json:"email"`
	DelayMs         int64  `json:"delayMs"`         // pause before the welcome mail; default 1s
	FailWelcome     int    `json:"failWelcome"`     // the welcome mail fails on this many first attempts
	VerifyTimeoutMs int64  `json:"verifyTimeoutMs"` // how long to wait for verification; default 24h
}

type user struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

type verification struct {
	UserID string `json:"userId"`
	Via    string `json:"via,omitempty"`
}

type onboardingResult struct {
	UserID   string `json:"userId"`
	Verified bool   `json:"verified"`
	Nudged   bool   `json:"nudged"`
	Outcome  string `json:"outcome"`
}

func init() {
	wf.Register(wf.Workflow[onboardingInput, onboardingResult]{
		Name: "onboarding", Version: onboardingVersion, RetentionDays: 30,
		// A broadcast of user.signed_up starts a run with the event's payload as its input.
		Triggers: []string{"user.signed_up"},
		Run:      onboarding,
	})
}

// onboardingStatus is the answer to the query "status": the stage the run is at, the user it
// onboards, and the query's argument echoed back.
type onboardingStatus struct {
	Stage  string          `json:"stage"`
	UserID string          `json:"userId"`
	Arg    json.RawMessage `json:"arg"`
}

func onboarding(ctx *wf.Context, in onboardingInput) (onboardingResult, error) {
	// The query reads the variables below as they are where the run stands (abi/ABI.md §4.17).
	var u user
	stage := "creating-user"
	wf.OnQuery(ctx, "status", func(arg json.RawMessage) (onboardingStatus, error) {
		return onboardingStatus{Stage: stage, UserID: u.ID, Arg: arg}, nil
	})
	u, err := wf.Step(ctx, "create-user", func(sc *wf.StepContext) (user, error) {
		sum := sha256.Sum256([]byte(strings.ToLower(in.Email)))
		return user{ID: "u-" + hex.EncodeToString(sum[:6]), Email: in.Email}, nil
	})
	if err != nil {
		return onboardingResult{}, err
	}

	stage = "welcome-delay"
	delay := time.Second
	if in.DelayMs > 0 {
		delay = time.Duration(in.DelayMs) * time.Millisecond
	}
	if err := wf.Sleep(ctx, "welcome-delay", delay); err != nil {
		return onboardingResult{}, err // cancelled
	}

	stage = "welcoming"
	_, err = wf.Step(ctx, welcomeStep, func(sc *wf.StepContext) (string, error) {
		if sc.Attempt <= in.FailWelcome {
			return "", wf.NewError("smtp_unavailable", "mail server refused attempt %d", sc.Attempt)
		}
		wf.Log(ctx, "welcome mail sent to %s on attempt %d", u.Email, sc.Attempt)
		return "sent", nil
	}, wf.WithRetry(wf.RetryPolicy{Attempts: 5, Backoff: "fixed", Base: 20 * time.Millisecond}))
	if err != nil {
		return onboardingResult{}, err
	}

	timeout := 24 * time.Hour
	if in.VerifyTimeoutMs > 0 {
		timeout = time.Duration(in.VerifyTimeoutMs) * time.Millisecond
	}
	stage = "awaiting-verify"
	v, timedOut, err := wf.WaitForEvent[verification](ctx, "await-verify", "verify",
		wf.Match(map[string]string{"userId": u.ID}), wf.Timeout(timeout))
	if err != nil {
		return onboardingResult{}, err
	}
	if !timedOut {
		if err := verifiedStep(ctx, u); err != nil {
			return onboardingResult{}, err
		}
		return onboardingResult{UserID: u.ID, Verified: true, Outcome: "verified via " + v.Via}, nil
	}
	stage = "nudging"
	if _, err := wf.Step(ctx, "send-nudge", func(sc *wf.StepContext) (bool, error) {
		wf.Log(ctx, "nudging %s to verify", u.Email)
		return true, nil
	}); err != nil {
		return onboardingResult{}, err
	}
	return onboardingResult{UserID: u.ID, Nudged: true, Outcome: "nudged"}, nil
}
