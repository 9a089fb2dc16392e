// wfhost-as: the AssemblyScript guest SDK of wfhost (abi/ABI.md, version 1).
//
// A workflow module's entry file imports this, registers its workflows at the top level and
// re-exports the ABI's functions:
//
//   import { register, Context, Result, Value } from "wfhost-as";
//   export * from "wfhost-as/exports";
//
// and is built with `--use abort=~lib/wfhost-as/assembly/abort/wfhostAbort` (README.md).

export { Kind, Value, Parsed, parse, tryParse, stringify, quote } from "./json";
export { CODE_CANCELLED, Failure, Result, Fields } from "./errors";
export {
  Backoff,
  BranchFn,
  ChildOptions,
  CODE_UNKNOWN_QUERY,
  Context,
  QueryFn,
  RetryPolicy,
  StepContext,
  StepFn,
  StepOptions,
  WaitOptions,
  WaitResult,
  WorkflowFn,
  WorkflowOptions,
  checkWorkflow,
  register,
  log,
  warn,
} from "./wf";
export { Concurrency, Debounce, Flow, Hook, HookStart, Rate, RunEnd } from "./flow";
export { BranchResult, BranchStatus, Join, ParallelResult } from "./parallel";
export { nowMs, random, randomBytes } from "./clock";
export { EventResult, HttpRequest, HttpResponse, HttpResult, SecretResult, base64Encode, base64Decode } from "./capabilities";
import "./abort";
