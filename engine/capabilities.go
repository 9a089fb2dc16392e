package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/store"
)

// outboundPolicy is the host's policy for a tenant's activations.
func (x *Executor) outboundPolicy(l store.Limits) *host.Outbound { return outboundPolicy(x.cfg, l) }

// outboundPolicy is the operator's outbound policy for a tenant with limits l: what its
// guests' http_request and its webhooks (hooks.go) obey.
func outboundPolicy(cfg Config, l store.Limits) *host.Outbound {
	return &host.Outbound{
		AllowHosts:       l.AllowedHosts,
		AllowPrivate:     cfg.AllowPrivateHosts,
		MaxRequestBytes:  cfg.MaxHTTPRequestBytes,
		MaxResponseBytes: cfg.MaxHTTPResponseBytes,
		Timeout:          cfg.HTTPTimeout,
		MaxRedirects:     cfg.MaxHTTPRedirects,
		Transport:        cfg.HTTPTransport,
	}
}

// capabilities is what a pass needs to serve its step callbacks' secrets and outbound audit:
// the store's reads and the audit trail, not its journal writes, which go through the pass's
// journal, nor the outbound metric, which its observer counts.
type capabilities struct {
	store  store.Store
	keys   *envelope.Keyring
	log    *slog.Logger // the engine's, not the run's: audit failures are the operator's
	events eventService
	// exec starts and cancels child runs (children.go).
	exec *Executor
}

func (x *Executor) capabilities() capabilities {
	return capabilities{store: x.cfg.Store, keys: x.cfg.SecretKeys, log: x.cfg.Logger, events: x.events, exec: x}
}

var _ host.EventSender = (*pass)(nil)

// eventService sends events as a client would: the Service, whose checks and limits apply to
// a workflow's sends as to the API's.
type eventService interface {
	Signal(ctx context.Context, tenantID string, req SignalRequest) (store.SignalResult, error)
	Broadcast(ctx context.Context, tenantID string, req BroadcastRequest) (store.BroadcastResult, error)
}

// SendEvent sends a step callback's event (host.EventSender) within the run's tenant. Its id
// is derived from the run, the step's key and the send's index n in the callback, so a
// callback that runs again makes the same sends as duplicates (ABI.md §4.13). A refusal the
// workflow can act on (no such run, the run ended, a full buffer, a payload over the limit,
// a name or id the checks refuse) is returned as refused; anything else stops the pass.
func (p *pass) SendEvent(ctx context.Context, req abi.EventSend, n int) (abi.EventSent, string, error) {
	if p.caps.events == nil || p.inStep == nil {
		return abi.EventSent{}, "no events can be sent from this activation", nil
	}
	sum := sha256.Sum256([]byte(p.run.ID + "\x00" + p.inStep.key + "\x00" + strconv.Itoa(n)))
	id := "wf-" + hex.EncodeToString(sum[:16])
	tenant := p.run.TenantID
	var sent abi.EventSent
	var err error
	if req.Broadcast {
		var res store.BroadcastResult
		res, err = p.caps.events.Broadcast(ctx, tenant, BroadcastRequest{Event: req.Event, Payload: req.Payload, EventID: id})
		sent = abi.EventSent{Resolved: res.Resolved, Duplicate: res.Duplicate}
		for _, r := range res.Started {
			sent.Started = append(sent.Started, r.ID)
		}
	} else {
		var res store.SignalResult
		res, err = p.caps.events.Signal(ctx, tenant, SignalRequest{RunID: req.RunID, Event: req.Event, Payload: req.Payload, SignalID: id})
		sent = abi.EventSent{State: abi.EventBuffered, Duplicate: res.Duplicate}
		if res.Delivered {
			sent.State = abi.EventDelivered
		}
	}
	switch {
	case err == nil:
		p.log.Info("step sent an event", "step", p.inStep.key, "event", req.Event, "to_run", req.RunID, "broadcast", req.Broadcast, "duplicate", sent.Duplicate)
		return sent, "", nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrLimit),
		errors.Is(err, ErrInvalid), errors.Is(err, ErrTooLarge):
		return abi.EventSent{}, err.Error(), nil
	}
	return abi.EventSent{}, "", err
}

// Secret gives a step callback its tenant's secret (host.SecretSource), opened. A value
// shorter than abi.MinSecretBytes, stored before there was a minimum, is not given out: it
// could not be redacted. An error (a key the keyring lacks) stops the pass, and the run is
// tried again later, once the operator has added the key.
func (p *pass) Secret(ctx context.Context, name string) ([]byte, bool, error) {
	v, ok, err := p.caps.store.GetSecret(ctx, p.run.TenantID, name)
	if err != nil || !ok {
		return nil, false, err
	}
	value, err := openSecret(p.caps.keys, p.run.TenantID, name, v)
	if err != nil {
		return nil, false, err
	}
	if len(value) < abi.MinSecretBytes {
		p.log.Warn("a step read a secret shorter than the minimum; it is treated as missing until it is set again",
			"secret", name, "minimum_bytes", abi.MinSecretBytes)
		return nil, false, nil
	}
	return value, true, nil
}

// RecordOutbound writes an outbound request to the run's audit trail (host.OutboundAuditor).
// The trail is for people, not for replay: a failed write is logged, and the step goes on.
func (p *pass) RecordOutbound(ctx context.Context, rec host.OutboundRecord) {
	err := p.caps.store.RecordOutbound(context.WithoutCancel(ctx), store.OutboundRecord{
		TenantID: p.run.TenantID, RunID: p.run.ID, Step: rec.Step, RequestID: rec.RequestID, Hop: rec.Hop,
		Method: rec.Method, Scheme: rec.Scheme, Host: rec.Host, Port: rec.Port, Path: rec.Path,
		Status: rec.Status, Error: rec.Error, BytesOut: rec.BytesOut, BytesIn: rec.BytesIn,
		DurationMs: float64(rec.Duration.Microseconds()) / 1000, At: rec.At,
	})
	if err != nil {
		p.caps.log.Warn("record an outbound request", "run", p.run.ID, "rule", outboundLabel(rec), "err", err)
	}
	p.obs.outboundRequested(rec)
}

// validSecretName applies ABI.md §4.2: a secret is named as a guest's secret_get names it.
func validSecretName(name string) error { return validName("secret", name) }

// outboundStats counts outbound requests (each hop of each) by tenant, destination and
// outcome for the metrics. Every label value is bounded and none is the guest's: the
// destination is the allowlist entry that let the request through (outboundLabel), and the
// outcome a host code.
type outboundStats struct {
	count func(tenant, host, outcome string)
}

func (o outboundStats) record(tenant string, rec host.OutboundRecord) {
	if o.count == nil {
		return
	}
	outcome := "response"
	switch rec.Error {
	case "":
	case abi.CodeHTTPDenied, abi.CodeOutsideStep:
		outcome = "refused"
	default:
		outcome = rec.Error
	}
	o.count(tenant, outboundLabel(rec), outcome)
}

// outboundLabel names a request's destination for metrics and logs: the allowlist entry that
// matched it, "invalid" for a malformed request, "refused" for any other the allowlist did not
// let through.
func outboundLabel(rec host.OutboundRecord) string {
	switch {
	case rec.Rule != "":
		return rec.Rule
	case rec.Malformed:
		return "invalid"
	}
	return "refused"
}

// newOutboundCounter registers wfhost_outbound_requests_total on reg (when not nil).
func newOutboundCounter(reg prometheus.Registerer) outboundStats {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wfhost_outbound_requests_total",
		Help: "Outbound HTTP requests of step callbacks, each redirect hop counted, by tenant, host (the allowlist entry that matched, or refused or invalid) and outcome (response, refused, http_timeout, ...).",
	}, []string{"tenant", "host", "outcome"})
	if reg != nil {
		reg.MustRegister(c)
	}
	return outboundStats{count: func(tenant, host, outcome string) { c.WithLabelValues(tenant, host, outcome).Inc() }}
}
