//go:build !linux

package host

import "os/exec"

// limitWorker has no portable rlimits to set outside Linux: the wall-time limit still holds.
func limitWorker(dataBytes, cpuSeconds int64) {}

func workerProcAttr(cmd *exec.Cmd) {}

func exitSignal(exit *exec.ExitError) (string, bool) { return "", false }
