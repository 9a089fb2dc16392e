package wf

// Hook is a completion hook (abi/ABI.md §7, a workflow's "onEnd"): when a run of the workflow
// ends with a status in When ("completed", "failed", "cancelled"), the host starts Start's
// workflow with the ended run as input, or POSTs the same to Webhook, signed with the tenant's
// secret. Exactly one of Start and Webhook. The host checks hooks when the module is uploaded
// and refuses the upload naming the fault; what a hook does never changes the ended run.
type Hook struct {
	When    []string   `json:"when"`
	Start   *HookStart `json:"start,omitempty"`
	Webhook string     `json:"webhook,omitempty"`
}

// HookStart names the workflow a hook starts; Version "" starts its latest version when the
// run ends.
type HookStart struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version,omitempty"`
}
