// Package defaults holds the default of every daemon setting and tenant limit, each written
// once: the host falls back on them for a zero field of its Limits and Outbound, the engine
// for a zero field of its Config and of its tenants' limits, and `wfhost run` shows them as its
// flags' values. They are constants, so nothing can change a default at run time; an operator
// changes what applies through the daemon's flags, an admin a tenant's own limits.
//
// Imports: the standard library only.
package defaults
