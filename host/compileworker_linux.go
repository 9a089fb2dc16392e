package host

import (
	"os/exec"
	"syscall"
)

// limitWorker sets the compile worker's own limits: its data (RLIMIT_DATA, which since Linux
// 4.7 counts every private writable mapping: Go's heap and wazero's code buffers; a compile
// that needs more dies with Go's out-of-memory error), its CPU time (SIGXCPU, then SIGKILL at
// the hard limit), and a lower priority, so that activations come first on a busy machine.
// Not RLIMIT_AS: Go reserves address space it never touches, and a worker could not even
// start under 1.5 GiB of it (measured).
func limitWorker(dataBytes, cpuSeconds int64) {
	if dataBytes > 0 {
		_ = syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: uint64(dataBytes), Max: uint64(dataBytes)})
	}
	if cpuSeconds > 0 {
		_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: uint64(cpuSeconds), Max: uint64(cpuSeconds) + 1})
	}
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10)
}

// execProgram replaces this process with argv (which keeps its limits); it returns only
// when that fails.
func execProgram(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, []string{})
}

// workerProcAttr makes the kernel kill the worker if the daemon dies first (even by SIGKILL).
func workerProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// exitSignal reports the signal that killed a process, if one did.
func exitSignal(exit *exec.ExitError) (string, bool) {
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String(), true
	}
	return "", false
}
