// Command hostile is a workflow module that misbehaves on purpose, one way per workflow, for
// the tests that show a bad guest fails its own run and nothing else. `echo` is its one
// well-behaved workflow.
package main
