package api

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/ui"
)

// Config configures the API handler.
type Config struct {
	// Service serves every request that checks, limits or changes something (required).
	Service Service
	// Store serves the reads that need nothing of the engine (required): the daemon's store.
	Store  Reader
	Logger *slog.Logger
	// Ready reports whether the daemon can serve (store reachable, migrations current).
	Ready func(ctx context.Context) error
	// Gatherer serves /metrics; nil serves an empty registry.
	Gatherer prometheus.Gatherer
	// AdminToken, when set, authenticates the admin routes (tenants and their tokens). Without
	// it the admin API is off. Tenant routes authenticate tokens stored per tenant.
	AdminToken string
	// MaxBodyBytes bounds JSON bodies; default 2 MiB. A tenant whose limits allow a larger
	// input or event may send that much and 64 KiB more (Handler.bodyLimit).
	MaxBodyBytes int64
	// MaxModuleBytes bounds module uploads; default 64 MiB (the engine applies its own limit).
	MaxModuleBytes int64
	// TracerProvider receives a server span per request (telemetry.go); nil makes none.
	TracerProvider trace.TracerProvider
}

// Handler serves the REST API. Safe for concurrent use.
type Handler struct {
	cfg    Config
	mux    *http.ServeMux
	tracer trace.Tracer
}

// New builds the handler.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Gatherer == nil {
		cfg.Gatherer = prometheus.NewRegistry()
	}
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, 2<<20)
	cfg.MaxModuleBytes = cmp.Or(cfg.MaxModuleBytes, 64<<20)
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), tracer: newTracer(cfg.TracerProvider)}

	for _, rt := range h.routes() {
		h.mux.Handle(rt.pattern, h.authenticated(rt))
	}
	h.mux.HandleFunc("GET /v1/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPIDocument)
	})

	h.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	h.mux.HandleFunc("GET /readyz", h.readyz)
	h.mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
	// The web console: static files, outside the route table and the OpenAPI document because
	// they are not API; the console calls the routes above with the token it was given.
	h.mux.Handle("GET /ui/", ui.Handler())
	h.mux.Handle("GET /ui", ui.Redirect())
	h.mux.Handle("GET /{$}", ui.Redirect())
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such route: "+r.Method+" "+r.URL.Path)
	})
	return h
}

// ServeHTTP serves r in a server span with an access log record (telemetry.go), and recovers
// from panics as a last resort: a request must never take the daemon down.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, pattern := h.mux.Handler(r)
	if pattern == "/" {
		pattern = "" // the catch-all answers 404 or 405: no route
	}
	h.observe(w, r, pattern, h.serve)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			h.cfg.Logger.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v)
			writeError(w, http.StatusInternalServerError, "internal", "internal error")
		}
	}()
	// ServeMux answers a known path with the wrong method by itself, in plain text; route
	// lookup first lets the API answer in its JSON error shape.
	if _, pattern := h.mux.Handler(r); pattern == "/" || pattern == "" {
		if allowed := h.allowedMethods(r); allowed != "" {
			w.Header().Set("Allow", allowed)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path)
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) allowedMethods(r *http.Request) string {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := h.mux.Handler(probe); pattern != "" && pattern != "/" {
			allowed = append(allowed, m)
		}
	}
	return strings.Join(allowed, ", ")
}

// access says who may call a route.
type access int

const (
	tenantAccess access = iota // a token of the tenant whose objects the route touches
	adminAccess                // the daemon's admin token
)

// route is one API operation. The table in routes() is the API: the mux, the OpenAPI
// document's test and the cross-tenant test all read it.
type route struct {
	pattern string // "METHOD /path/{param}"
	access  access
	handle  func(http.ResponseWriter, *http.Request) error
}

func (h *Handler) routes() []route {
	return []route{
		{"POST /v1/modules", tenantAccess, h.deployModule},
		{"GET /v1/modules", tenantAccess, h.listModules},
		{"GET /v1/upgrades/{id}", tenantAccess, h.getUpgrade},
		{"GET /v1/workflows", tenantAccess, h.listWorkflows},
		{"POST /v1/workflows/{name}/runs", tenantAccess, h.startRun},
		{"GET /v1/workflows/{name}/runs", tenantAccess, h.listRuns},
		{"GET /v1/runs", tenantAccess, h.listRuns},
		{"GET /v1/workflows/{name}/runs/counts", tenantAccess, h.countRuns},
		{"GET /v1/runs/counts", tenantAccess, h.countRuns},
		{"GET /v1/workflows/{name}/runs/{id}", tenantAccess, h.getRun},
		{"DELETE /v1/workflows/{name}/runs/{id}", tenantAccess, h.terminateRun},
		{"POST /v1/workflows/{name}/runs/{id}/cancel", tenantAccess, h.cancelRun},
		{"POST /v1/workflows/{name}/runs/{id}/query/{query}", tenantAccess, h.queryRun},
		{"POST /v1/workflows/{name}/runs/{id}/replay", tenantAccess, h.replayRun},
		{"POST /v1/workflows/{name}/runs/{id}/terminate", tenantAccess, h.terminateRun},
		{"POST /v1/workflows/{name}/runs/{id}/restart", tenantAccess, h.restartRun},
		{"POST /v1/workflows/{name}/runs/{id}/pause", tenantAccess, h.pauseRun},
		{"POST /v1/workflows/{name}/runs/{id}/resume", tenantAccess, h.resumeRun},
		{"POST /v1/workflows/{name}/pause", tenantAccess, h.pauseWorkflow},
		{"POST /v1/workflows/{name}/resume", tenantAccess, h.resumeWorkflow},
		{"POST /v1/workflows/{name}/runs/{id}/fork", tenantAccess, h.forkRun},
		{"POST /v1/workflows/{name}/runs/{id}/signals/{event}", tenantAccess, h.signal},
		{"POST /v1/workflows/{name}/signal-with-start", tenantAccess, h.signalWithStart},
		{"GET /v1/workflows/{name}/runs/{id}/steps", tenantAccess, h.steps},
		{"GET /v1/workflows/{name}/runs/{id}/outbound", tenantAccess, h.outbound},
		{"GET /v1/workflows/{name}/runs/{id}/log", tenantAccess, h.runLog},
		{"GET /v1/workflows/{name}/runs/{id}/logs", tenantAccess, h.guestLog},
		{"GET /v1/workflows/{name}/runs/{id}/export", tenantAccess, h.exportRun},
		{"POST /v1/events/{event}", tenantAccess, h.broadcast},
		{"GET /v1/tenant", tenantAccess, h.ownTenant},
		{"GET /v1/tokens", tenantAccess, h.listOwnTokens},
		{"POST /v1/tokens", tenantAccess, h.createOwnToken},
		{"DELETE /v1/tokens/{token}", tenantAccess, h.revokeOwnToken},
		{"GET /v1/secrets", tenantAccess, h.listOwnSecrets},
		{"PUT /v1/secrets/{secret}", tenantAccess, h.putOwnSecret},
		{"DELETE /v1/secrets/{secret}", tenantAccess, h.deleteOwnSecret},
		{"GET /v1/hooks", tenantAccess, h.listHooks},
		{"PUT /v1/hooks/{id}", tenantAccess, h.putHook},
		{"DELETE /v1/hooks/{id}", tenantAccess, h.deleteHook},
		{"POST /v1/hooks/signing-secret", tenantAccess, h.rotateHookSecret},
		{"GET /v1/hooks/deliveries", tenantAccess, h.listDeliveries},
		{"POST /v1/schedules", tenantAccess, h.createSchedule},
		{"GET /v1/schedules", tenantAccess, h.listSchedules},
		{"GET /v1/schedules/{id}", tenantAccess, h.getSchedule},
		{"DELETE /v1/schedules/{id}", tenantAccess, h.deleteSchedule},
		{"POST /v1/schedules/{id}/pause", tenantAccess, h.pauseSchedule},
		{"POST /v1/schedules/{id}/resume", tenantAccess, h.resumeSchedule},
		{"POST /v1/schedules/{id}/trigger", tenantAccess, h.triggerSchedule},
		{"GET /v1/schedules/{id}/next", tenantAccess, h.nextFireTimes},

		{"POST /v1/tenants", adminAccess, h.createTenant},
		{"GET /v1/tenants", adminAccess, h.listTenants},
		{"GET /v1/tenants/{tenant}", adminAccess, h.getTenant},
		{"PATCH /v1/tenants/{tenant}", adminAccess, h.setTenantLimits},
		{"GET /v1/tenants/{tenant}/tokens", adminAccess, h.listTenantTokens},
		{"POST /v1/tenants/{tenant}/tokens", adminAccess, h.createTenantToken},
		{"DELETE /v1/tenants/{tenant}/tokens/{token}", adminAccess, h.revokeTenantToken},
		{"GET /v1/tenants/{tenant}/secrets", adminAccess, h.listTenantSecrets},
		{"PUT /v1/tenants/{tenant}/secrets/{secret}", adminAccess, h.putTenantSecret},
	}
}

// Routes lists the API's operations as "METHOD /path" patterns, for documentation tests.
func (h *Handler) Routes() []string {
	var out []string
	for _, rt := range h.routes() {
		out = append(out, rt.pattern)
	}
	return out
}

// bearerToken reads the token of an `Authorization: Bearer <token>` header. The scheme is
// case-insensitive (RFC 7235 §2.1), so `bearer` and `BEARER` are the same scheme; clients such
// as curl scripts and some proxies send it lower-cased.
func bearerToken(header string) (string, bool) {
	scheme, token, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

type tenantKey struct{}

// tokenKey is the context key of the id of the token a tenant's request came with.
type tokenKey struct{}

// authenticated checks the bearer token of the request against the route's access: the admin
// token for admin routes, a stored tenant token otherwise, whose tenant every handler then
// reads from the context. Anything else is 401, and says which kind of token was needed.
func (h *Handler) authenticated(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer h.audit(rt, r)
		rq := requestOf(r.Context())
		secret, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok {
			unauthorized(w, false, "an Authorization: Bearer <token> header is required")
			return
		}
		isAdmin := h.cfg.AdminToken != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(h.cfg.AdminToken)) == 1
		switch rt.access {
		case adminAccess:
			if !isAdmin {
				msg := "this route needs the admin token"
				if h.cfg.AdminToken == "" {
					msg = "the admin API is off: start wfhost run with --admin-token"
				}
				unauthorized(w, true, msg)
				return
			}
			rq.admin = true
		case tenantAccess:
			if isAdmin {
				unauthorized(w, true, "the admin token manages tenants; this route needs a tenant's token")
				return
			}
			tok, err := h.cfg.Service.Authenticate(r.Context(), secret)
			if errors.Is(err, store.ErrNotFound) {
				unauthorized(w, true, "the bearer token is unknown or revoked")
				return
			}
			if err != nil {
				h.fail(w, r, err)
				return
			}
			rq.tenant = tok.TenantID
			ctx := context.WithValue(r.Context(), tenantKey{}, tok.TenantID)
			r = r.WithContext(context.WithValue(ctx, tokenKey{}, tok.ID))
		}
		if err := checkQuery(r, routeQuery[rt.pattern]); err != nil {
			h.fail(w, r, err)
			return
		}
		if err := rt.handle(w, r); err != nil {
			h.fail(w, r, err)
		}
	})
}

// unauthorized answers 401 with the challenge RFC 6750 asks of a bearer-token API, so a
// generic HTTP client or proxy knows which scheme to retry with: the realm alone when no
// bearer token was sent, and error="invalid_token" when one was and it will not do here.
func unauthorized(w http.ResponseWriter, tokenSent bool, msg string) {
	challenge := `Bearer realm="wfhost"`
	if tokenSent {
		challenge += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeError(w, http.StatusUnauthorized, "unauthorized", msg)
}

func tenant(r *http.Request) string { return r.Context().Value(tenantKey{}).(string) }

// tokenID is the id of the token the request came with (the run it starts names it).
func tokenID(r *http.Request) string { id, _ := r.Context().Value(tokenKey{}).(string); return id }

// readyCheckTimeout bounds a readiness check, so a store that hangs makes the probe fail
// instead of hanging it past the prober's own timeout.
const readyCheckTimeout = 3 * time.Second

func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyCheckTimeout)
		defer cancel()
		if err := h.cfg.Ready(ctx); err != nil {
			writeError(w, http.StatusServiceUnavailable, "not_ready", err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// StoreHealth is what readiness asks of a store; both stores implement it.
type StoreHealth interface {
	Ping(ctx context.Context) error
	// MigrationsCurrent reports whether every migration the binary knows has been applied.
	MigrationsCurrent(ctx context.Context) (bool, error)
}

// StoreReady is a Config.Ready for a daemon over st: the store answers and its schema is
// migrated as far as this binary expects.
func StoreReady(st StoreHealth) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := st.Ping(ctx); err != nil {
			return fmt.Errorf("store unreachable: %w", err)
		}
		current, err := st.MigrationsCurrent(ctx)
		if err != nil {
			return fmt.Errorf("read the store's migration version: %w", err)
		}
		if !current {
			return errors.New("store migrations are not current: run wfhost migrate")
		}
		return nil
	}
}
