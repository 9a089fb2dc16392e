package engine

// OpenSecret lets the tests open a stored value as a step callback's read would.
var OpenSecret = openSecret

// TokenTTL is how long the engine trusts a token it read (tokens.go).
const TokenTTL = tokenTTL
