package host

// RedirectExtismHTTP lets host_test check the import rewrite byte for byte.
var RedirectExtismHTTP = redirectExtismHTTP
