package engine

// OpenSecret lets the tests open a stored value as a step callback's read would.
var OpenSecret = openSecret
