package api

import (
	"net/http"
	"time"

	"github.com/wfhost/wfhost/store"
)

type tenantView struct {
	ID string `json:"id"`
	// Limits are the tenant's own overrides; EffectiveLimits adds the operator's defaults.
	Limits          store.Limits  `json:"limits"`
	EffectiveLimits *store.Limits `json:"effectiveLimits,omitempty"`
	CreatedAt       time.Time     `json:"createdAt"`
}

type tokenView struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	// Secret is shown once, in the response that creates the token.
	Secret string `json:"secret,omitempty"`
}

func viewToken(t store.Token, secret string) tokenView {
	return tokenView{ID: t.ID, Tenant: t.TenantID, Name: t.Name, CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt, Secret: secret}
}

func (h *Handler) viewTenant(r *http.Request, t store.Tenant) (tenantView, error) {
	eff, err := h.cfg.Engine.Limits(r.Context(), t.ID)
	if err != nil {
		return tenantView{}, err
	}
	return tenantView{ID: t.ID, Limits: t.Limits, EffectiveLimits: &eff, CreatedAt: t.CreatedAt}, nil
}

// POST /v1/tenants (admin): {"id", "limits"?} -> the tenant and its first token, secret included.
func (h *Handler) createTenant(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ID     string       `json:"id"`
		Limits store.Limits `json:"limits"`
	}
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	t, tok, secret, err := h.cfg.Engine.CreateTenant(r.Context(), body.ID, body.Limits)
	if err != nil {
		return err
	}
	view, err := h.viewTenant(r, t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"tenant": view, "token": viewToken(tok, secret)})
	return nil
}

func (h *Handler) listTenants(w http.ResponseWriter, r *http.Request) error {
	ts, err := h.cfg.Engine.ListTenants(r.Context())
	if err != nil {
		return err
	}
	out := make([]tenantView, 0, len(ts))
	for _, t := range ts {
		out = append(out, tenantView{ID: t.ID, Limits: t.Limits, CreatedAt: t.CreatedAt})
	}
	writeJSON(w, http.StatusOK, map[string]any{"tenants": out})
	return nil
}

func (h *Handler) getTenant(w http.ResponseWriter, r *http.Request) error {
	return h.writeTenant(w, r, r.PathValue("tenant"))
}

// GET /v1/tenant: the caller's own tenant and the limits that apply to it.
func (h *Handler) ownTenant(w http.ResponseWriter, r *http.Request) error {
	return h.writeTenant(w, r, tenant(r))
}

func (h *Handler) writeTenant(w http.ResponseWriter, r *http.Request, id string) error {
	t, err := h.cfg.Engine.GetTenant(r.Context(), id)
	if err != nil {
		return err
	}
	view, err := h.viewTenant(r, t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view)
	return nil
}

// PATCH /v1/tenants/{tenant} (admin): {"limits": {...}} replaces the tenant's overrides.
func (h *Handler) setTenantLimits(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Limits *store.Limits `json:"limits"`
	}
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	if body.Limits == nil {
		return badRequest("invalid_request", `the body must be {"limits": {...}}`)
	}
	t, err := h.cfg.Engine.SetTenantLimits(r.Context(), r.PathValue("tenant"), *body.Limits)
	if err != nil {
		return err
	}
	view, err := h.viewTenant(r, t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view)
	return nil
}

func (h *Handler) listTenantTokens(w http.ResponseWriter, r *http.Request) error {
	return h.writeTokens(w, r, r.PathValue("tenant"))
}

func (h *Handler) listOwnTokens(w http.ResponseWriter, r *http.Request) error {
	return h.writeTokens(w, r, tenant(r))
}

func (h *Handler) writeTokens(w http.ResponseWriter, r *http.Request, tenantID string) error {
	if _, err := h.cfg.Engine.GetTenant(r.Context(), tenantID); err != nil {
		return err
	}
	toks, err := h.cfg.Engine.ListTokens(r.Context(), tenantID)
	if err != nil {
		return err
	}
	out := make([]tokenView, 0, len(toks))
	for _, t := range toks {
		out = append(out, viewToken(t, ""))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
	return nil
}

func (h *Handler) createTenantToken(w http.ResponseWriter, r *http.Request) error {
	return h.createToken(w, r, r.PathValue("tenant"))
}

func (h *Handler) createOwnToken(w http.ResponseWriter, r *http.Request) error {
	return h.createToken(w, r, tenant(r))
}

// createToken: {"name"?} -> the token with its secret, shown this once.
func (h *Handler) createToken(w http.ResponseWriter, r *http.Request, tenantID string) error {
	var body struct {
		Name string `json:"name"`
	}
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	tok, secret, err := h.cfg.Engine.CreateToken(r.Context(), tenantID, body.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewToken(tok, secret))
	return nil
}

func (h *Handler) revokeTenantToken(w http.ResponseWriter, r *http.Request) error {
	return h.revokeToken(w, r, r.PathValue("tenant"))
}

func (h *Handler) revokeOwnToken(w http.ResponseWriter, r *http.Request) error {
	return h.revokeToken(w, r, tenant(r))
}

func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, tenantID string) error {
	tok, err := h.cfg.Engine.RevokeToken(r.Context(), tenantID, r.PathValue("token"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewToken(tok, ""))
	return nil
}
