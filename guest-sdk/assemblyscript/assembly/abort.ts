// The abort handler. AssemblyScript calls abort for `throw`, a failed bounds check and out of
// memory; by default it imports env.abort, which the ABI does not allow, so modules are built
// with `--use abort=~lib/wfhost-as/assembly/abort/wfhostAbort` (or the same path relative to the
// compiler's root), which routes it here.
//
// There are no exceptions to unwind with, so abort cannot return to the workflow. Inside a
// step callback it ends the callback with an error, as a panic does in the Go SDK: the host
// journals the attempt and, when attempts remain, suspends the run for a retry (step_done does
// not return). Otherwise it writes the message to stderr and traps: the run fails with code
// "trap" and the host puts the guest's last stderr lines into the error message.

import * as raw from "./raw";
import { quote } from "./json";
import { inStep, currentStep, leaveStep } from "./state";

@external("wasi_snapshot_preview1", "fd_write")
declare function fd_write(fd: u32, iovs: usize, iovsLen: u32, written: usize): u16;

const stderr: u32 = 2;

export function wfhostAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let text = "abort: " + (message == null ? "(no message)" : message);
  if (fileName != null) text += " in " + fileName + ":" + line.toString() + ":" + column.toString();
  if (inStep) {
    const step = currentStep;
    leaveStep();
    const info = '{"code":"panic","message":' + quote("step panicked: " + text) + "}";
    const b = String.UTF8.encode(info);
    // Returns only when the step's attempts are spent (STEP_FAILED); the workflow cannot be
    // resumed from here, so the pass ends with a trap that says which step failed.
    raw.step_done(raw.OUTCOME_ERROR, changetype<usize>(b), b.byteLength);
    text = "step " + step + " failed: " + text;
  }
  writeStderr(text + "\n");
  unreachable();
}

function writeStderr(s: string): void {
  const b = String.UTF8.encode(s);
  const iov = new ArrayBuffer(8);
  store<u32>(changetype<usize>(iov), changetype<usize>(b));
  store<u32>(changetype<usize>(iov) + 4, b.byteLength);
  const written = new ArrayBuffer(4);
  fd_write(stderr, changetype<usize>(iov), 1, changetype<usize>(written));
}
