package engine

import "errors"

// Errors the engine returns for bad requests, besides the store's sentinels (store.ErrNotFound,
// store.ErrConflict, store.ErrLimit), which it passes through wrapped.
var (
	// ErrInvalid: the request is malformed (invalid module, bad JSON, missing name).
	ErrInvalid = errors.New("invalid request")
	// ErrTooLarge: a module or payload is over its size limit.
	ErrTooLarge = errors.New("too large")
)
