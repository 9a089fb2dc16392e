package wire

// ErrorBody is every error answer: {"error": {"code", "message"}}, with a fitting status.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong: Code is stable and meant for programs (not_found,
// invalid_request, ...), Message is for people and names the field at fault.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Check is the replay's finding of a resume onto another version that it refused
	// (resume_refused): where the run's journal and the version's code part.
	Check *UpgradeRun `json:"check,omitempty"`
}
