package api

import (
	"net/http"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/store"
)

// viewTenant is the tenant with its own limits and the limits that apply to it (its own over
// the operator's defaults).
func (h *Handler) viewTenant(r *http.Request, t store.Tenant) (wire.Tenant, error) {
	eff, err := h.cfg.Service.Limits(r.Context(), t.ID)
	if err != nil {
		return wire.Tenant{}, err
	}
	effective := viewLimits(eff)
	return wire.Tenant{ID: t.ID, Limits: viewLimits(t.Limits), EffectiveLimits: &effective, CreatedAt: t.CreatedAt}, nil
}

// POST /v1/tenants (admin): {"id", "limits"?} -> the tenant and its first token, secret included.
func (h *Handler) createTenant(w http.ResponseWriter, r *http.Request) error {
	var body wire.CreateTenant
	if err := h.decodeRequiredJSON(w, r, &body); err != nil {
		return err
	}
	requestOf(r.Context()).target = clip(body.ID)
	t, tok, secret, err := h.cfg.Service.CreateTenant(r.Context(), body.ID, storeLimits(body.Limits))
	if err != nil {
		return err
	}
	view, err := h.viewTenant(r, t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.TenantCreated{Tenant: view, Token: viewToken(tok, secret)})
	return nil
}

func (h *Handler) listTenants(w http.ResponseWriter, r *http.Request) error {
	ts, err := h.cfg.Store.ListTenants(r.Context())
	if err != nil {
		return err
	}
	out := wire.TenantPage{Tenants: make([]wire.Tenant, 0, len(ts))}
	for _, t := range ts {
		out.Tenants = append(out.Tenants, wire.Tenant{ID: t.ID, Limits: viewLimits(t.Limits), CreatedAt: t.CreatedAt})
	}
	writeJSON(w, http.StatusOK, out)
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
	t, err := h.cfg.Service.GetTenant(r.Context(), id)
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
	var body wire.SetLimits
	if err := h.decodeRequiredJSON(w, r, &body); err != nil {
		return err
	}
	if body.Limits == nil {
		return badRequest("invalid_request", `the body must be {"limits": {...}}`)
	}
	t, err := h.cfg.Service.SetTenantLimits(r.Context(), r.PathValue("tenant"), storeLimits(*body.Limits))
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
	if _, err := h.cfg.Service.GetTenant(r.Context(), tenantID); err != nil {
		return err
	}
	toks, err := h.cfg.Service.ListTokens(r.Context(), tenantID)
	if err != nil {
		return err
	}
	out := wire.TokenPage{Tokens: make([]wire.Token, 0, len(toks))}
	for _, t := range toks {
		out.Tokens = append(out.Tokens, viewToken(t, ""))
	}
	writeJSON(w, http.StatusOK, out)
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
	var body wire.CreateToken
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	tok, secret, err := h.cfg.Service.CreateToken(r.Context(), tenantID, body.Name)
	if err != nil {
		return err
	}
	auditNote(r, "token", tok.ID)
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
	tok, err := h.cfg.Service.RevokeToken(r.Context(), tenantID, r.PathValue("token"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewToken(tok, ""))
	return nil
}
