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
}
