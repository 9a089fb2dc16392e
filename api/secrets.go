package api

import (
	"net/http"

	"github.com/wfhost/wfhost/api/wire"
)

// Secrets are write-only: a value goes in through PUT and comes out only to a step callback
// of its tenant (secret_get). Listing shows names and times. The engine checks a value's bounds
// (ABI.md §4.12: 8 bytes to 64 KiB; a shorter one is a 400 invalid_request naming the minimum)
// and encrypts it; without a key it refuses with 503 secrets_disabled.

func (h *Handler) putOwnSecret(w http.ResponseWriter, r *http.Request) error {
	return h.putSecret(w, r, tenant(r))
}

func (h *Handler) putTenantSecret(w http.ResponseWriter, r *http.Request) error {
	// The tenant first: an id no tenant can have is a 400, an unknown one a 404.
	if _, err := h.cfg.Service.GetTenant(r.Context(), r.PathValue("tenant")); err != nil {
		return err
	}
	return h.putSecret(w, r, r.PathValue("tenant"))
}

// putSecret: {"value": "..."}.
func (h *Handler) putSecret(w http.ResponseWriter, r *http.Request, tenantID string) error {
	var body wire.PutSecret
	if err := h.decodeRequiredJSON(w, r, &body); err != nil {
		return err
	}
	if body.Value == nil {
		return badRequest("invalid_request", `the body must be {"value": "..."}`)
	}
	s, err := h.cfg.Service.PutSecret(r.Context(), tenantID, r.PathValue("secret"), []byte(*body.Value))
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
	if _, err := h.cfg.Service.GetTenant(r.Context(), r.PathValue("tenant")); err != nil {
		return err
	}
	return h.listSecrets(w, r, r.PathValue("tenant"))
}

func (h *Handler) listSecrets(w http.ResponseWriter, r *http.Request, tenantID string) error {
	secrets, err := h.cfg.Store.ListSecrets(r.Context(), tenantID)
	if err != nil {
		return err
	}
	out := wire.SecretPage{Secrets: make([]wire.Secret, 0, len(secrets))}
	for _, s := range secrets {
		out.Secrets = append(out.Secrets, viewSecret(s))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) deleteOwnSecret(w http.ResponseWriter, r *http.Request) error {
	if err := h.cfg.Service.DeleteSecret(r.Context(), tenant(r), r.PathValue("secret")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.SecretDeleted{Name: r.PathValue("secret"), Deleted: true})
	return nil
}
