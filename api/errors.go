package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// requestError is a bad request the handler itself detected.
type requestError struct {
	status  int
	code    string
	message string
}

func (e *requestError) Error() string { return e.message }

func badRequest(code, msg string) error {
	return &requestError{status: http.StatusBadRequest, code: code, message: msg}
}

// retryAfterSeconds is the Retry-After of a 503: a restarted or failed-over Postgres is
// usually back within a second or two.
const retryAfterSeconds = "1"

// fail maps an error to its status; anything unexpected is a 500 whose details stay in the log.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var (
		re       *requestError
		refused  *engine.ResumeRefused
		tooBig   *http.MaxBytesError
		queryErr *engine.QueryError
		status   int
		code     string
		message  = err.Error()
	)
	switch {
	case errors.As(err, &re):
		status, code, message = re.status, re.code, re.message
	case errors.As(err, &refused):
		writeJSON(w, http.StatusConflict, wire.ErrorBody{Error: wire.ErrorDetail{
			Code: "resume_refused", Message: message, Check: viewCheck(refused.Check)}})
		return
	case errors.As(err, &tooBig):
		status, code = http.StatusRequestEntityTooLarge, "too_large"
		message = "request body is over its limit"
	case errors.Is(err, engine.ErrUnknownQuery):
		status, code = http.StatusNotFound, "unknown_query"
	case errors.Is(err, engine.ErrRunEnded):
		status, code = http.StatusConflict, "run_ended"
	case errors.Is(err, engine.ErrQueryUnsupported):
		status, code = http.StatusConflict, "query_unsupported"
	case errors.As(err, &queryErr):
		// The workflow could not answer: its handler's error or the dry pass's fault, with the
		// code the workflow or the host gave it in the message.
		status, code = http.StatusUnprocessableEntity, "query_failed"
		if queryErr.Info.Code == abi.CodeDeadline {
			status, code = http.StatusGatewayTimeout, "query_timeout"
		}
	case errors.Is(err, store.ErrNotFound):
		status, code = http.StatusNotFound, "not_found"
	case errors.Is(err, engine.ErrUpgradeRefused):
		status, code = http.StatusConflict, "upgrade_refused"
	case errors.Is(err, store.ErrConflict):
		status, code = http.StatusConflict, "conflict"
	case errors.Is(err, store.ErrLimit):
		status, code = http.StatusTooManyRequests, "limit_exceeded"
	case errors.Is(err, engine.ErrTooLarge):
		status, code = http.StatusRequestEntityTooLarge, "too_large"
	case errors.Is(err, engine.ErrSecretsDisabled):
		status, code = http.StatusServiceUnavailable, "secrets_disabled"
	case errors.Is(err, engine.ErrInvalid):
		status, code = http.StatusBadRequest, "invalid_request"
	case errors.Is(err, store.ErrUnavailable):
		// The store is restarting, failing over or full: the request may succeed in a moment,
		// and a client or load balancer that honours Retry-After tries again then.
		h.cfg.Logger.Warn("request failed: store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", retryAfterSeconds)
		status, code, message = http.StatusServiceUnavailable, "unavailable", "the store is unavailable; try again shortly"
	case errors.Is(err, store.ErrRefused):
		// A value the store can never keep: trying again would fail again.
		status, code = http.StatusBadRequest, "invalid_request"
	default:
		h.cfg.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		status, code, message = http.StatusInternalServerError, "internal", "internal error"
	}
	writeError(w, status, code, message)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, wire.ErrorBody{Error: wire.ErrorDetail{Code: code, Message: message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	// The console is served from the same origin: no browser is to read an answer as
	// anything but JSON, whatever a tenant put in it.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
