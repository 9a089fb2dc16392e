package abi

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Hook is one completion hook (ABI.md §7, a workflow's onEnd; the API's tenant hooks take the
// same form): when a run of the workflow ends in one of When, start another workflow with the
// ended run as input (Start), or POST the same to a webhook (Webhook). Exactly one of the two.
type Hook struct {
	When    []string   `json:"when"`
	Start   *HookStart `json:"start,omitempty"`
	Webhook string     `json:"webhook,omitempty"`
}

// HookStart names the workflow a start hook starts; Version "" is its latest version when the
// run ends.
type HookStart struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version,omitempty"`
}

// Bounds on hooks.
const (
	// MaxHooks bounds a workflow's onEnd and a tenant's hooks.
	MaxHooks = 16
	// MaxWebhookURLBytes bounds a webhook's URL.
	MaxWebhookURLBytes = 2048
)

// HookStatuses are the run ends a hook may name.
var HookStatuses = []string{"completed", "failed", "cancelled"}

// Validate applies ABI.md §7 to one hook: 1 to 3 distinct statuses of HookStatuses; exactly
// one of a start (a workflow name, CheckName, and an optional version, CheckText) and a
// webhook (CheckWebhookURL). Whether the webhook's host is in the tenant's outbound allowlist
// is the tenant's policy, checked when it is delivered.
func (h Hook) Validate() error {
	if len(h.When) == 0 {
		return errors.New("when is empty: name at least one of completed, failed, cancelled")
	}
	seen := map[string]bool{}
	for _, s := range h.When {
		ok := false
		for _, v := range HookStatuses {
			ok = ok || s == v
		}
		if !ok {
			return fmt.Errorf("when: %q is not one of completed, failed, cancelled", truncate(s, 40))
		}
		if seen[s] {
			return fmt.Errorf("when: %q is named twice", s)
		}
		seen[s] = true
	}
	switch {
	case (h.Start == nil) == (h.Webhook == ""):
		return errors.New("name exactly one of start and webhook")
	case h.Start != nil:
		if err := CheckName("start workflow", h.Start.Workflow); err != nil {
			return err
		}
		if err := CheckText("start version", h.Start.Version, MaxNameLen); err != nil {
			return err
		}
	default:
		return CheckWebhookURL(h.Webhook)
	}
	return nil
}

// CheckWebhookURL requires a webhook URL to be an absolute http or https URL of at most
// MaxWebhookURLBytes of UTF-8 with a host, and no user information or fragment.
func CheckWebhookURL(raw string) error {
	if err := CheckText("webhook URL", raw, MaxWebhookURLBytes); err != nil {
		return err
	}
	for _, r := range raw {
		if isControl(r) || r == ' ' {
			return fmt.Errorf("webhook URL contains the character %U", r)
		}
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("webhook URL cannot be read: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("webhook URL %q: the scheme must be http or https", truncate(raw, 80))
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("webhook URL %q has no host", truncate(raw, 80))
	case u.User != nil:
		return fmt.Errorf("webhook URL %q carries user information; sign with the tenant's secret instead", truncate(raw, 80))
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("webhook URL %q has a fragment", truncate(raw, 80))
	}
	return nil
}
