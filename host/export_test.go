package host

// CoresHeld is how many of the tenant's cores its guests hold now (cores.go).
func (r *Runtime) CoresHeld(tenant string) int {
	r.cores.mu.Lock()
	defer r.cores.mu.Unlock()
	if t := r.cores.tenants[tenant]; t != nil {
		return t.held
	}
	return 0
}
