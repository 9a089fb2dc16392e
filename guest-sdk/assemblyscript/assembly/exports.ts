// The guest exports of abi/ABI.md §3. AssemblyScript exports only what the entry file exports,
// so a workflow module's entry re-exports these: `export * from "wfhost-as/exports";`

import * as raw from "./raw";
import { describeJSON, runWorkflow } from "./wf";

// allocations keep the buffers handed to the host reachable until the run that reads them
// ends: the host writes into them after wfhost_alloc returns, and with a collecting runtime
// nothing else would hold them.
let allocations = new Array<ArrayBuffer>();

// describeBuf keeps the description alive while the host reads it.
let describeBuf = new ArrayBuffer(0);

export function wfhost_abi_version(): i32 {
  return raw.ABI;
}

export function wfhost_alloc(size: u32): usize {
  // Never empty, so every allocation has its own address.
  const b = new ArrayBuffer(<i32>size + 1);
  allocations.push(b);
  return changetype<usize>(b);
}

export function wfhost_describe(): u64 {
  describeBuf = String.UTF8.encode(describeJSON());
  return (<u64>changetype<usize>(describeBuf) << 32) | <u64>describeBuf.byteLength;
}

export function wfhost_run(namePtr: usize, nameLen: u32, inputPtr: usize, inputLen: u32): void {
  const name = String.UTF8.decodeUnsafe(namePtr, nameLen);
  const input = new ArrayBuffer(<i32>inputLen);
  memory.copy(changetype<usize>(input), inputPtr, inputLen);
  runWorkflow(name, input);
  // ABI.md §3: the host's buffers stay valid until this run returns. (A pass that suspends
  // never returns here; its instance is reset to the snapshot, which has none.)
  allocations = new Array<ArrayBuffer>();
}
