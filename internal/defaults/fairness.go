package defaults

import "runtime"

// How one host shares itself among tenants while more than one is about (engine/fairness.go).

// TenantStarts is how many starts one tenant has in flight on a host at once while another
// tenant is about: twice the cores. A start is a statement of its own (a run created, often
// leased here), and 32 callers of one tenant starting runs as fast as they go kept 32 of them
// queued in Postgres, in front of every other tenant's commits.
func TenantStarts() int { return max(2, 2*runtime.GOMAXPROCS(0)) }

// ReservedSlots is how many slots a host keeps, beyond its concurrency, for tenants with
// nothing in flight on it: an eighth of the concurrency, at least one.
func ReservedSlots(concurrency int) int { return max(1, concurrency/8) }
