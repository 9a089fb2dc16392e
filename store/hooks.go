package store

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// Completion hooks (issue 16, point 4): what happens when a run ends. A hook either starts
// another workflow with the ended run as its input (a durable trigger) or sends the same to a
// webhook. The store writes a run's hooks in the transaction that ends it, whatever ends it (a
// finish, a cancel, a terminate, a timeout), so none is lost and none is made twice; the
// run itself is never changed by a hook. store/RATIONALE.md says how a run without hooks pays
// nothing for them at its end.

// Hook sources.
const (
	HookSourceTenant = "tenant" // set through the API
	HookSourceModule = "module" // declared by a module's description (abi.Hook, onEnd)
)

// Hook delivery kinds and statuses.
const (
	HookKindStart   = "start"
	HookKindWebhook = "webhook"

	DeliveryPending   = "pending"   // a webhook, or a start under flow control, the dispatcher has still to deliver
	DeliveryDelivered = "delivered" // a started run, or a webhook answered 2xx
	DeliveryFailed    = "failed"    // no run started (unknown workflow, chain too deep), or attempts spent
)

// MaxHookChainDepth bounds a chain of start hooks: a run started by the 8th hook start in a
// row starts no other (its start hooks are recorded failed, hook_chain_too_deep), so a hook
// that starts its own workflow cannot loop forever. Both stores hold the same number.
const MaxHookChainDepth = 8

// ModuleHookID is the id of the i-th onEnd hook of a workflow version: "onEnd:" is a prefix
// no tenant hook's id can take (their ids are names without ':').
func ModuleHookID(workflow, version string, i int) string {
	return "onEnd:" + workflow + "@" + version + "#" + strconv.Itoa(i)
}

// ModuleHooks are the store rows of a workflow version's onEnd.
func ModuleHooks(w Workflow) []Hook {
	out := make([]Hook, 0, len(w.OnEnd))
	for i, h := range w.OnEnd {
		mh := Hook{TenantID: w.TenantID, ID: ModuleHookID(w.Name, w.Version, i), Source: HookSourceModule,
			Workflow: w.Name, Version: w.Version, URL: h.Webhook}
		for _, s := range h.When {
			mh.When = append(mh.When, RunStatus(s))
		}
		if h.Start != nil {
			mh.StartWorkflow, mh.StartVersion = h.Start.Workflow, h.Start.Version
		}
		out = append(out, mh)
	}
	return out
}

// Hook is one completion hook of a tenant: for the runs of Workflow ("" every workflow) and
// Version ("" every version) that end in one of When, start StartWorkflow (at StartVersion,
// "" the latest) or POST to URL. Exactly one of StartWorkflow and URL is set.
type Hook struct {
	TenantID      string
	ID            string
	Source        string // HookSourceTenant or HookSourceModule
	Workflow      string
	Version       string
	When          []RunStatus
	StartWorkflow string
	StartVersion  string
	URL           string
	CreatedAt     time.Time
}

// HookAttempt is one try of a webhook delivery.
type HookAttempt struct {
	At         time.Time `json:"at"`
	Status     int       `json:"status,omitempty"` // the HTTP status; 0 when none came
	Error      string    `json:"error,omitempty"`  // why it failed, "" on a 2xx
	DurationMs float64   `json:"durationMs"`
}

// HookDelivery is one hook of one ended run, as it stands.
type HookDelivery struct {
	ID       string
	TenantID string
	RunID    string // the run that ended
	HookID   string
	Kind     string // HookKindStart or HookKindWebhook
	Target   string // the workflow started, or the URL
	Payload  json.RawMessage
	// Depth is how many hook starts led to the ended run, plus one.
	Depth    int
	Status   string
	Attempts int
	// AttemptLog is every webhook attempt, oldest first.
	AttemptLog []HookAttempt
	LastError  string
	// StartedRunID is the run a start hook created ("" for a webhook, or when none was).
	StartedRunID string
	NextAt       *time.Time // a pending webhook's next attempt
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// DeliveryFilter selects deliveries for ListDeliveries.
type DeliveryFilter struct {
	RunID        string // the ended run's deliveries
	StartedRunID string // the delivery that started this run (its triggeredBy)
	Status       string
	Limit        int
}

// DeliveryOutcome is what one webhook attempt came to (EndDeliveryAttempt).
type DeliveryOutcome struct {
	Attempt   HookAttempt
	Delivered bool
	// RetryAt is when to try again when not delivered; nil: the attempts are spent, the
	// delivery failed.
	RetryAt *time.Time
}

// PendingDeliveries is one tenant's part of the webhook outbox (CountPendingDeliveries).
type PendingDeliveries struct {
	TenantID string
	Pending  int
	// EarliestDue is when the first of them is due: its next attempt, or the end of the lease a
	// dispatcher holds it under. Past it, the delivery waits for a dispatcher.
	EarliestDue time.Time
}

// HookStore keeps completion hooks, their deliveries and the tenants' signing secrets.
type HookStore interface {
	// PutHook creates or replaces the tenant's hook h.ID (a tenant hook; the tenant must
	// exist: ErrNotFound); created says which. Module hooks are written by PutModule.
	PutHook(ctx context.Context, h Hook) (_ Hook, created bool, err error)
	// ListHooks returns the tenant's hooks, tenant and module ones, by ID.
	ListHooks(ctx context.Context, tenantID string) ([]Hook, error)
	// DeleteHook removes a tenant hook; an unknown one (or a module's) is ErrNotFound.
	// Deliveries it made stay.
	DeleteHook(ctx context.Context, tenantID, id string) error
	// HookSecret returns the tenant's signing secret as stored, storing create as it when it
	// has none (created says so). create nil only reads: ErrNotFound when there is none. The
	// bytes are opaque here: the engine seals a secret before a store sees it (a row from
	// before sealing holds the secret itself), as it does a tenant secret's value.
	HookSecret(ctx context.Context, tenantID string, create []byte) (secret []byte, created bool, err error)
	// RotateHookSecret replaces (or sets) the tenant's signing secret.
	RotateHookSecret(ctx context.Context, tenantID string, secret []byte) error
	// ReplaceHookSecret sets the tenant's stored signing secret to next if it is still prev
	// (ok=false, nothing written, when it was rotated or removed since it was read): the
	// engine's compare-and-set for sealing a row from before sealing, or rewrapping one.
	ReplaceHookSecret(ctx context.Context, tenantID string, prev, next []byte) (ok bool, err error)
	// ClaimDeliveries leases up to limit pending webhook deliveries, of every tenant, that are
	// due and not leased to a live owner, to owner for leaseFor, counting the attempt each is
	// claimed for (Attempts after the claim). Rows another claimer holds are skipped, so two
	// dispatchers never hold one delivery at once.
	ClaimDeliveries(ctx context.Context, owner string, leaseFor time.Duration, limit int) ([]HookDelivery, error)
	// EndDeliveryAttempt records the outcome of attempt of delivery id, if owner still holds
	// it for that attempt (ok=false, nothing written, otherwise: the lease ran out and another
	// dispatcher took it), and releases the lease.
	EndDeliveryAttempt(ctx context.Context, id, owner string, attempt int, out DeliveryOutcome) (ok bool, err error)
	// StartHookDelivery makes the run of a pending start delivery that owner holds for attempt
	// (claimed by ClaimDeliveries): one a store could not start in the transaction that ended
	// the run, because the started workflow has flow control, which only the store's Go start
	// path applies (Postgres: hooks_ended cannot). In one transaction it creates the run as a
	// trigger's start is created, under its workflow's flow control, with the idempotency key
	// hook:<ended run>:<hook id> (so it is made once however often this is called), and records
	// the delivery delivered with the run it started, or failed (the workflow is gone, the
	// input names no flow key). ok=false, nothing written: owner no longer holds it.
	StartHookDelivery(ctx context.Context, id, owner string, attempt int) (ok bool, err error)
	// NextDeliveryDue is the earliest next attempt of a pending webhook; ok=false when none.
	NextDeliveryDue(ctx context.Context) (at time.Time, ok bool, err error)
	// CountPendingDeliveries returns the pending webhook deliveries of every tenant that has
	// some, by tenant: the outbox's depth and how late its oldest due delivery is, for the
	// metrics. It reads the pending rows only.
	CountPendingDeliveries(ctx context.Context) ([]PendingDeliveries, error)
	// ListDeliveries returns the tenant's deliveries matching f, newest first.
	ListDeliveries(ctx context.Context, tenantID string, f DeliveryFilter) ([]HookDelivery, error)
}
