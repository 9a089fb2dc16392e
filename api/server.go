package api

import (
	"cmp"
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// Config configures the API handler.
type Config struct {
	Engine *engine.Engine
	Logger *slog.Logger
	// Ready reports whether the daemon can serve (store reachable, migrations current).
	Ready func(ctx context.Context) error
	// Gatherer serves /metrics; nil serves an empty registry.
	Gatherer prometheus.Gatherer
	// Token, when set, is required as "Authorization: Bearer <token>" on /v1 routes.
	Token string
	// MaxBodyBytes bounds JSON bodies; default 2 MiB.
	MaxBodyBytes int64
	// MaxModuleBytes bounds module uploads; default 64 MiB (the engine applies its own limit).
	MaxModuleBytes int64
}

// Handler serves the REST API. Safe for concurrent use.
type Handler struct {
	cfg Config
	mux *http.ServeMux
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
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}

	v1 := func(pattern string, fn func(http.ResponseWriter, *http.Request) error) {
		h.mux.Handle(pattern, h.authenticated(fn))
	}
	v1("POST /v1/modules", h.deployModule)
	v1("GET /v1/modules", h.listModules)
	v1("GET /v1/workflows", h.listWorkflows)
	v1("POST /v1/workflows/{name}/runs", h.startRun)
	v1("GET /v1/workflows/{name}/runs", h.listRuns)
	v1("GET /v1/workflows/{name}/runs/{id}", h.getRun)
	v1("DELETE /v1/workflows/{name}/runs/{id}", h.cancelRun)
	v1("POST /v1/workflows/{name}/runs/{id}/signals/{event}", h.signal)
	v1("GET /v1/workflows/{name}/runs/{id}/steps", h.steps)
	v1("POST /v1/events/{event}", h.broadcast)

	h.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	h.mux.HandleFunc("GET /readyz", h.readyz)
	h.mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such route: "+r.Method+" "+r.URL.Path)
	})
	return h
}

// ServeHTTP recovers from panics as a last resort: a request must never take the daemon down.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := h.mux.Handler(probe); pattern != "" && pattern != "/" {
			allowed = append(allowed, m)
		}
	}
	return strings.Join(allowed, ", ")
}

type tenantKey struct{}

// authenticated resolves the request's tenant. With a token configured, a request without it
// is 401. Every tenant-scoped handler reads the tenant from the context, so multi-tenant token
// lookup replaces this function alone.
func (h *Handler) authenticated(fn func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.cfg.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.cfg.Token)) != 1 {
				writeError(w, http.StatusUnauthorized, "unauthorized", "a valid bearer token is required")
				return
			}
		}
		r = r.WithContext(context.WithValue(r.Context(), tenantKey{}, store.DefaultTenant))
		if err := fn(w, r); err != nil {
			h.fail(w, r, err)
		}
	})
}

func tenant(r *http.Request) string { return r.Context().Value(tenantKey{}).(string) }

func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Ready != nil {
		if err := h.cfg.Ready(r.Context()); err != nil {
			writeError(w, http.StatusServiceUnavailable, "not_ready", err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
