package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The API's telemetry: a server span per request (its parent the caller's W3C traceparent, so
// a start or a signal joins the caller's trace and the engine's spans hang under it), one
// access log record per request, and one audit record per attempt at an administrative change.

// tracerName is the instrumentation scope of the API's spans.
const tracerName = "github.com/wfhost/wfhost/api"

// propagator reads traceparent and tracestate: the W3C Trace Context every OpenTelemetry SDK
// sends by default.
var propagator = propagation.TraceContext{}

// request is what the layers of one request learn about it: the route matched, who the
// caller is (authenticated fills it in), and what was answered.
type request struct {
	route  string // the route's pattern, "" for none
	tenant string // the tenant of a tenant token
	admin  bool   // the admin token
	status int
	bytes  int64
	// noted are what a handler adds to its audit record: what it changed, known only once
	// the body is read or the change made (a new tenant's id, a module's digest).
	noted  []any
	target string // the tenant a change is to, when not the caller's nor in the path
}

// auditNote adds key=value to the audit record of r's request (auditedRoutes).
func auditNote(r *http.Request, key, value string) {
	rq := requestOf(r.Context())
	rq.noted = append(rq.noted, key, clip(value))
}

type requestKey struct{}

func requestOf(ctx context.Context) *request {
	rq, _ := ctx.Value(requestKey{}).(*request)
	if rq == nil {
		return &request{} // a handler called without ServeHTTP (tests): nothing is recorded
	}
	return rq
}

// recorder keeps the status and the size of a response.
type recorder struct {
	http.ResponseWriter
	rq *request
}

func (w *recorder) WriteHeader(status int) {
	if w.rq.status == 0 {
		w.rq.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.rq.status == 0 {
		w.rq.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.rq.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer (flushes, deadlines).
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func newTracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(tracerName)
}

// observe serves r through next inside a server span, then writes its access log record.
func (h *Handler) observe(w http.ResponseWriter, r *http.Request, route string, next func(http.ResponseWriter, *http.Request)) {
	began := time.Now()
	rq := &request{route: route}
	name := route
	if name == "" {
		name = r.Method // an unknown path: its text is the client's, not a span name
	}
	ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := h.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("http.request.method", r.Method),
		attribute.String("url.path", clip(r.URL.Path)),
		attribute.String("http.route", route),
	))
	ctx = context.WithValue(ctx, requestKey{}, rq)
	defer func() {
		status := rq.status
		if status == 0 {
			status = http.StatusOK
		}
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if rq.tenant != "" {
			span.SetAttributes(attribute.String("tenant", rq.tenant))
		}
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		span.End()
		h.accessLog(r, rq, status, time.Since(began), span.SpanContext())
	}()
	next(&recorder{ResponseWriter: w, rq: rq}, r.WithContext(ctx))
}

// quietRoutes are probes and scrapes: logged at debug, since a prober calls them every few
// seconds and they change nothing.
var quietRoutes = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}

// accessLog writes one record of a request: the route and the path, who called, the status,
// the bytes of the response and how long it took. Never the query or the body: they may carry
// inputs and payloads.
func (h *Handler) accessLog(r *http.Request, rq *request, status int, took time.Duration, sc trace.SpanContext) {
	attrs := []any{"log", "access", "method", clip(r.Method), "path", clip(r.URL.Path), "route", rq.route, "status", status,
		"bytes", rq.bytes, "duration_ms", float64(took.Microseconds()) / 1000, "remote", r.RemoteAddr}
	switch {
	case rq.admin:
		attrs = append(attrs, "actor", "admin")
	case rq.tenant != "":
		attrs = append(attrs, "actor", "tenant", "tenant", rq.tenant)
	}
	if sc.IsValid() {
		attrs = append(attrs, "trace_id", sc.TraceID().String())
	}
	level := slog.LevelInfo
	if quietRoutes[rq.route] {
		level = slog.LevelDebug
	}
	h.cfg.Logger.Log(r.Context(), level, "http request", attrs...)
}

// auditedRoutes are the routes that change what a tenant may run or who may act: deploys,
// tenants, tokens and secrets, each named by the action its audit record carries.
var auditedRoutes = map[string]string{
	"POST /v1/modules":                           "module.deploy",
	"POST /v1/tokens":                            "token.create",
	"DELETE /v1/tokens/{token}":                  "token.revoke",
	"PUT /v1/secrets/{secret}":                   "secret.put",
	"DELETE /v1/secrets/{secret}":                "secret.delete",
	"POST /v1/tenants":                           "tenant.create",
	"PATCH /v1/tenants/{tenant}":                 "tenant.set_limits",
	"POST /v1/tenants/{tenant}/tokens":           "token.create",
	"DELETE /v1/tenants/{tenant}/tokens/{token}": "token.revoke",
	"PUT /v1/tenants/{tenant}/secrets/{secret}":  "secret.put",
}

// audit writes the audit record of an attempt at an administrative change, whatever its
// outcome: one refused (401, 403, 4xx) is as much an operator's business as one done. r is
// the request as the route's handler saw it (its path values set).
func (h *Handler) audit(rt route, r *http.Request) {
	action, ok := auditedRoutes[rt.pattern]
	if !ok {
		return
	}
	rq := requestOf(r.Context())
	status := rq.status
	if status == 0 {
		status = http.StatusOK
	}
	outcome := "done"
	if status >= 400 {
		outcome = "refused"
	}
	attrs := []any{"log", "audit", "action", action, "outcome", outcome, "status", status, "route", rt.pattern}
	switch {
	case rq.admin:
		attrs = append(attrs, "actor", "admin")
	case rq.tenant != "":
		attrs = append(attrs, "actor", "tenant:"+rq.tenant)
	default:
		attrs = append(attrs, "actor", "unauthenticated")
	}
	// The object changed: names from the path, never a secret's value or a token's secret.
	target := rq.tenant
	if t := r.PathValue("tenant"); t != "" {
		target = t
	}
	if rq.target != "" {
		target = rq.target
	}
	if target != "" {
		attrs = append(attrs, "tenant", clip(target))
	}
	for _, p := range []string{"token", "secret"} {
		if v := r.PathValue(p); v != "" {
			attrs = append(attrs, p, clip(v))
		}
	}
	attrs = append(attrs, rq.noted...)
	if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
		attrs = append(attrs, "trace_id", sc.TraceID().String())
	}
	h.cfg.Logger.Log(r.Context(), slog.LevelInfo, "audit: "+action, attrs...)
}

// maxLoggedBytes bounds a client's text (a path, a name in it) in a record or span: a hostile
// path must not make a record of a megabyte.
const maxLoggedBytes = 512

// clip is s cut at maxLoggedBytes, marked when cut.
func clip(s string) string {
	if len(s) <= maxLoggedBytes {
		return s
	}
	return s[:maxLoggedBytes] + "...(cut)"
}
