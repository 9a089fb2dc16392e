// Command wfhost is the durable workflow daemon (`wfhost run`), its migrator, and a client for
// its REST API. Every flag can also be set through the WFHOST_* variable named in its help.
package main
