//go:build !linux

package host

import (
	"errors"
	"os/exec"
)

// limitWorker has no portable rlimits to set outside Linux: the wall-time limit still holds.
func limitWorker(dataBytes, cpuSeconds int64) {}

func workerProcAttr(cmd *exec.Cmd) {}

// execProgram is not available here: a transform for snapshots fails, and modules keep replay.
func execProgram(argv []string) error { return errors.New("exec is not supported on this system") }

func exitSignal(exit *exec.ExitError) (string, bool) { return "", false }
