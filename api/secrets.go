package api

import (
	"net/http"
	"time"

	"github.com/wfhost/wfhost/store"
)

// Secrets are write-only: a value goes in through PUT and comes out only to a step callback
// of its tenant (secret_get). Listing shows names and times. The engine checks a value's bounds
// (ABI.md §4.12: 8 bytes to 64 KiB; a shorter one is a 400 invalid_request naming the minimum)
// and encrypts it; without a key it refuses with 503 secrets_disabled.

type secretView struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func viewSecret(s store.Secret) secretView {
	return secretView{Name: s.Name, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func (h *Handler) putOwnSecret(w http.ResponseWriter, r *http.Request) error {
	return h.putSecret(w, r, tenant(r))
}

func (h *Handler) putTenantSecret(w http.ResponseWriter, r *http.Request) error {
	// The tenant first: an id no tenant can have is a 400, an unknown one a 404.
	if _, err := h.cfg.Engine.GetTenant(r.Context(), r.PathValue("tenant")); err != nil {
		return err
	}
	return h.putSecret(w, r, r.PathValue("tenant"))
}

// putSecret: {"value": "..."}.
func (h *Handler) putSecret(w http.ResponseWriter, r *http.Request, tenantID string) error {
	var body struct {
		Value *string `json:"value"`
	}
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	if body.Value == nil {
		return badRequest("invalid_request", `the body must be {"value": "..."}`)
	}
	s, err := h.cfg.Engine.PutSecret(r.Context(), tenantID, r.PathValue("secret"), []byte(*body.Value))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewSecret(s))
	return nil
}

func (h *Handler) listOwnSecrets(w http.ResponseWriter, r *http.Request) error {
	return h.listSecrets(w, r, tenant(r))
}

func (h *Handler) listTenantSecrets(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.cfg.Engine.GetTenant(r.Context(), r.PathValue("tenant")); err != nil {
		return err
	}
	return h.listSecrets(w, r, r.PathValue("tenant"))
}

func (h *Handler) listSecrets(w http.ResponseWriter, r *http.Request, tenantID string) error {
	secrets, err := h.cfg.Engine.ListSecrets(r.Context(), tenantID)
	if err != nil {
		return err
	}
	out := make([]secretView, 0, len(secrets))
	for _, s := range secrets {
		out = append(out, viewSecret(s))
	}
	writeJSON(w, http.StatusOK, map[string]any{"secrets": out})
	return nil
}

func (h *Handler) deleteOwnSecret(w http.ResponseWriter, r *http.Request) error {
	if err := h.cfg.Engine.DeleteSecret(r.Context(), tenant(r), r.PathValue("secret")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": r.PathValue("secret"), "deleted": true})
	return nil
}

// outboundView is one hop of an outbound request in the audit trail.
type outboundView struct {
	Step       string    `json:"step,omitempty"`
	RequestID  string    `json:"requestId,omitempty"`
	Hop        int       `json:"hop"`
	Method     string    `json:"method"`
	Scheme     string    `json:"scheme,omitempty"`
	Host       string    `json:"host"`
	Port       int       `json:"port,omitempty"`
	Path       string    `json:"path"`
	Status     int       `json:"status,omitempty"`
	Error      string    `json:"error,omitempty"`
	BytesOut   int       `json:"bytesOut"`
	BytesIn    int       `json:"bytesIn"`
	DurationMs float64   `json:"durationMs"`
	At         time.Time `json:"at"`
}

func viewOutbound(o store.OutboundRecord) outboundView {
	return outboundView{Step: o.Step, RequestID: o.RequestID, Hop: o.Hop, Method: o.Method, Scheme: o.Scheme,
		Host: o.Host, Port: o.Port, Path: o.Path, Status: o.Status, Error: o.Error, BytesOut: o.BytesOut,
		BytesIn: o.BytesIn, DurationMs: o.DurationMs, At: o.At}
}
