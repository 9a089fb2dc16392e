package wire

import "time"

// Limits bound what one tenant may use. A zero (absent) field means "the daemon's default";
// api/openapi.json gives each one's range.
type Limits struct {
	MemoryPages         int   `json:"memoryPages,omitempty"`         // per instance, 64 KiB each
	ActivationTimeoutMs int64 `json:"activationTimeoutMs,omitempty"` // wall time of one activation
	Concurrency         int   `json:"concurrency,omitempty"`         // activations at once, over all hosts
	MaxModuleBytes      int   `json:"maxModuleBytes,omitempty"`
	MaxInputBytes       int   `json:"maxInputBytes,omitempty"`
	MaxOutputBytes      int   `json:"maxOutputBytes,omitempty"`
	MaxStepOutputBytes  int   `json:"maxStepOutputBytes,omitempty"`
	MaxEventBytes       int   `json:"maxEventBytes,omitempty"`
	MaxStepsPerRun      int   `json:"maxStepsPerRun,omitempty"`
	MaxBufferedEvents   int   `json:"maxBufferedEvents,omitempty"` // events kept for a run before a wait takes them
	// AllowedHosts are the hosts step callbacks may send HTTP requests to (ABI.md §4.11).
	AllowedHosts []string `json:"allowedHosts,omitempty"`
}

// Tenant is a tenant with its own limit overrides and, when the answer has them, the limits
// that apply to it (its overrides over the daemon's defaults).
type Tenant struct {
	ID              string    `json:"id"`
	Limits          Limits    `json:"limits"`
	EffectiveLimits *Limits   `json:"effectiveLimits,omitempty"`
	CreatedAt       time.Time `json:"createdAt"`
}

// TenantPage lists the tenants (admin).
type TenantPage struct {
	Tenants []Tenant `json:"tenants"`
}

// CreateTenant is the body of POST /v1/tenants (admin).
type CreateTenant struct {
	ID     string `json:"id"`
	Limits Limits `json:"limits"`
}

// TenantCreated answers POST /v1/tenants: the tenant and its first token, secret included.
type TenantCreated struct {
	Tenant Tenant `json:"tenant"`
	Token  Token  `json:"token"`
}

// SetLimits is the body of PATCH /v1/tenants/{tenant} (admin): Limits replaces the tenant's
// overrides ({} clears them) and is required.
type SetLimits struct {
	Limits *Limits `json:"limits"`
}

// Token is an API token of a tenant.
type Token struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	// Secret is shown once, in the answer that creates the token.
	Secret string `json:"secret,omitempty"`
}

// TokenPage lists a tenant's tokens, revoked ones included.
type TokenPage struct {
	Tokens []Token `json:"tokens"`
}

// CreateToken is the body of POST /v1/tokens and POST /v1/tenants/{tenant}/tokens.
type CreateToken struct {
	Name string `json:"name,omitempty"`
}

// Secret is a tenant's secret without its value: values go in and never come out.
type Secret struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// SecretPage lists a tenant's secrets.
type SecretPage struct {
	Secrets []Secret `json:"secrets"`
}

// PutSecret is the body of PUT /v1/secrets/{secret}: Value is required.
type PutSecret struct {
	Value *string `json:"value"`
}

// SecretDeleted answers DELETE /v1/secrets/{secret}.
type SecretDeleted struct {
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}
