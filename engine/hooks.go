package engine

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// Completion hooks: the store writes a run's hooks in the transaction that ends it (a start
// hook's run, or a webhook's outbox row); the dispatcher here delivers the webhooks. Every host
// runs one; they share the outbox through leases (store.ClaimDeliveries), so two hosts never
// hold one delivery at once, and a host that dies mid-delivery loses its lease and the row is
// tried again: at least once, with the delivery's id in a header for the receiver's dedup.

// Dispatcher defaults (Config.HookPoll, HookAttempts, HookBackoff).
const (
	DefaultHookPoll     = 5 * time.Second
	DefaultHookAttempts = 8
	DefaultHookBackoff  = 10 * time.Second
	// hookBackoffMax bounds the wait between two attempts.
	hookBackoffMax = time.Hour
	// hookBatch is the most deliveries one claim takes.
	hookBatch = 16
)

// Webhook headers. The signature is Stripe's and Svix's shape: t is the Unix time the
// attempt was signed, v1 the hex HMAC-SHA256, under the tenant's signing secret, of
// "<t>.<body>" (SignWebhook); a receiver recomputes it and refuses an old t.
const (
	HeaderSignature = "Wfhost-Signature"
	HeaderDelivery  = "Wfhost-Delivery"
	HeaderAttempt   = "Wfhost-Attempt"
)

// errSigningSecret is a delivery attempt's error when the tenant's signing secret cannot be
// read or opened: the delivery list shows it to the tenant, so it names no key and no cause
// beyond this; the daemon's log has the cause.
var errSigningSecret = errors.New("signing_secret_unavailable: the tenant's webhook signing secret could not be read with this daemon's key, so nothing was sent; the operator's log says why")

// SignWebhook is the Wfhost-Signature header value of body sent at t under secret.
func SignWebhook(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// NewHookSecret is a fresh signing secret: 32 random bytes, given to the tenant as
// "whsec_" and their hex.
func NewHookSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return []byte("whsec_" + hex.EncodeToString(b))
}

// dispatcher delivers webhook deliveries. Safe for concurrent use; one loop per Executor.
type dispatcher struct {
	cfg     Config
	store   store.Store
	limits  *limitsCache
	log     *slog.Logger
	clock   clock.Clock
	metrics hookMetrics
}

func newDispatcher(cfg Config, limits *limitsCache, m *metrics) *dispatcher {
	return &dispatcher{cfg: cfg, store: cfg.Store, limits: limits, log: cfg.Logger, clock: cfg.Clock, metrics: m.hooks}
}

// loop dispatches what is due, then sleeps until the next due delivery or HookPoll, until
// ctx ends or drain is closed.
func (d *dispatcher) loop(ctx context.Context, drain <-chan struct{}) {
	for {
		d.dispatch(ctx)
		now := d.clock.Now()
		next := now.Add(d.cfg.HookPoll)
		if at, ok, err := d.store.NextDeliveryDue(ctx); err == nil && ok {
			next = clock.Earlier(next, clock.Later(at, now.Add(10*time.Millisecond)))
		}
		t := d.clock.NewTimerAt(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-drain:
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// DispatchHooks delivers the webhook deliveries due now, whether or not the Executor is
// started, and returns how many attempts it made.
func (x *Executor) DispatchHooks(ctx context.Context) int { return x.hooks.dispatch(ctx) }

// dispatch claims due deliveries a batch at a time and delivers each, until a claim comes
// back empty; it returns the attempts made.
func (d *dispatcher) dispatch(ctx context.Context) int {
	total := 0
	for ctx.Err() == nil {
		lease := d.cfg.HTTPTimeout + time.Minute
		claimed := d.clock.Now()
		ds, err := d.store.ClaimDeliveries(ctx, d.cfg.Owner, lease, hookBatch)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("claim hook deliveries", "err", err)
			}
			return total
		}
		for _, dl := range ds {
			// A row whose lease would run out before its request could end is left alone: the
			// claim that takes it then makes the next attempt, and this one is never sent, so
			// two dispatchers never send one delivery at once.
			if d.clock.Now().Add(d.cfg.HTTPTimeout).After(claimed.Add(lease - 10*time.Second)) {
				continue
			}
			d.deliver(ctx, dl)
		}
		total += len(ds)
		if len(ds) < hookBatch {
			return total
		}
	}
	return total
}

// deliver makes one attempt of a claimed webhook delivery and records its outcome: 2xx
// delivered; a refusal of the tenant's outbound policy (or a body over its bound) failed at
// once, since trying again cannot change it; anything else tried again after the backoff
// until the attempts are spent.
//
// A pending start (a hook whose workflow has flow control, which the store could not start in
// the ending transaction) is started by the store instead (StartHookDelivery), under the
// idempotency key that makes it once; a store error leaves it for the next claim.
func (d *dispatcher) deliver(ctx context.Context, dl store.HookDelivery) {
	if dl.Kind == store.HookKindStart {
		ok, err := d.store.StartHookDelivery(context.WithoutCancel(ctx), dl.ID, d.cfg.Owner, dl.Attempts)
		switch {
		case err != nil:
			d.log.Error("start a hook's run", "delivery", dl.ID, "err", err)
		case !ok:
			d.log.Warn("hook delivery lease lost before its run was started", "delivery", dl.ID)
		}
		return
	}
	began := d.clock.Now()
	attempt := store.HookAttempt{At: began.UTC()}
	final := false
	status, err := d.send(ctx, dl)
	var refused *abi.ErrorInfo
	switch {
	case errors.As(err, &refused):
		attempt.Error = refused.Code + ": " + refused.Message
		final = refused.Code == abi.CodeHTTPDenied || refused.Code == abi.CodeHTTPTooLarge
	case err != nil:
		attempt.Error = err.Error()
	case status < 200 || status > 299:
		attempt.Status, attempt.Error = status, fmt.Sprintf("http_status: the receiver answered %d", status)
	default:
		attempt.Status = status
	}
	ended := d.clock.Now()
	took := ended.Sub(began)
	attempt.DurationMs = float64(took.Microseconds()) / 1000
	out := store.DeliveryOutcome{Attempt: attempt, Delivered: attempt.Error == ""}
	outcome := hookDelivered
	if !out.Delivered {
		outcome = hookFailed
		if !final && dl.Attempts < d.cfg.HookAttempts {
			wait := d.cfg.HookBackoff << min(dl.Attempts-1, 20)
			retry := ended.Add(min(wait, hookBackoffMax))
			out.RetryAt = &retry
			outcome = hookRetried
		}
	}
	ok, err := d.store.EndDeliveryAttempt(context.WithoutCancel(ctx), dl.ID, d.cfg.Owner, dl.Attempts, out)
	switch {
	case err != nil:
		d.log.Error("record hook delivery attempt", "delivery", dl.ID, "err", err)
	case !ok:
		d.log.Warn("hook delivery lease lost before its outcome was recorded", "delivery", dl.ID)
	default:
		// Counted once recorded, so the counts match the outbox: an attempt whose outcome
		// another dispatcher overwrote (a lost lease) is that one's to count.
		d.metrics.attempt(dl, outcome, took, ended)
	}
}

// send POSTs the delivery's payload, signed, through the tenant's outbound policy.
func (d *dispatcher) send(ctx context.Context, dl store.HookDelivery) (int, error) {
	limits, err := d.limits.get(ctx, dl.TenantID)
	if err != nil {
		return 0, fmt.Errorf("read the tenant's limits: %w", err)
	}
	secret, err := hookSigningSecret(ctx, d.store, d.cfg.SecretKeys, dl.TenantID, d.log)
	if err != nil {
		// Nothing is sent unsigned or signed with anything but the tenant's secret; the
		// attempt fails (and is tried again: a keyring fixed meanwhile delivers it) and the
		// operator hears why, the tenant only that the secret could not be read.
		d.log.Error("a webhook delivery cannot be signed: the tenant's signing secret cannot be read", "tenant", dl.TenantID, "delivery", dl.ID, "err", err)
		return 0, errSigningSecret
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "wfhost-hooks/1")
	h.Set(HeaderDelivery, dl.ID)
	h.Set(HeaderAttempt, strconv.Itoa(dl.Attempts))
	h.Set(HeaderSignature, SignWebhook(secret, d.clock.Now(), dl.Payload))
	status, _, _, refused := outboundPolicy(d.cfg, limits).Deliver(ctx,
		abi.HTTPRequest{Method: http.MethodPost, URL: dl.Target, Headers: h, Body: dl.Payload})
	if refused != nil {
		return 0, refused
	}
	return status, nil
}
