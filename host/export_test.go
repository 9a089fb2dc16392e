package host

// CoresHeld is how many of the tenant's cores its guests hold now (cores.go).
func (r *Runtime) CoresHeld(tenant string) int { return r.cores.Held(tenant) }
