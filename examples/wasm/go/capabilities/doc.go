// Command capabilities is a workflow module that uses the host's capabilities (outbound HTTP
// through a plain http.Client, tenant secrets) and tries to leak a secret, for the tests of
// both. It is a module of its own because net/http makes it three times the size of the
// others.
package main
