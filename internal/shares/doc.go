// Package shares bounds what one tenant holds of a host's resource while other tenants are
// about: a tenant alone takes as much as it asks for, and once another tenant is about each
// holds at most its share, the rest waiting in order. The host's cores for guest code
// (host/cores.go) and the engine's concurrent starts (engine/fairness.go) are shared this way.
package shares
