// A thin helper layer over the wfhost verbs as Extism host functions (abi/ABI.md, "Extism
// modules"). AssemblyScript has no closures over locals, so a step is not a callback: step()
// begins it, and when it must run (mustRun) the workflow runs its body inline and ends it with
// ok() or err(). The JSON on the wire is what examples/wasm/go sends.

import { alloc, free, length, load_u64, load_u8, store_u64, store_u8 } from "@extism/as-pdk/lib/env";
import { NUMBER, parse, quote, stringifyValue, Obj, Value } from "./json";
// Flow control and completion hooks are the AssemblyScript SDK's own classes, with its JSON and
// its copy of the host's rules: this door's description then says what the SDK's would.
import { Flow, Hook, MAX_HOOKS } from "../../../../guest-sdk/assemblyscript/assembly/flow";
import { stringify as sdkStringify, Value as SDKValue } from "../../../../guest-sdk/assemblyscript/assembly/json";

@external("extism:host/user", "step_run")
declare function host_step_run(name: u64, opts: u64): u64;
@external("extism:host/user", "step_done")
declare function host_step_done(outcome: i32, data: u64): u64;
@external("extism:host/user", "sleep")
declare function host_sleep(name: u64, durationMs: i64): u64;
@external("extism:host/user", "wait_event")
declare function host_wait_event(name: u64, opts: u64): u64;
@external("extism:host/user", "log")
declare function host_log(level: i32, msg: u64): void;
@external("extism:host/user", "complete")
declare function host_complete(output: u64): void;
@external("extism:host/user", "fail")
declare function host_fail(info: u64): void;
@external("extism:host/user", "event_send")
declare function host_event_send(req: u64): u64;
@external("extism:host/user", "child_run")
declare function host_child_run(name: u64, req: u64): u64;
@external("extism:host/user", "continue_as_new")
declare function host_continue_as_new(req: u64): void;
@external("extism:host/user", "query_respond")
declare function host_query_respond(outcome: i32, data: u64): void;
@external("extism:host/user", "parallel_run")
declare function host_parallel_run(name: u64, req: u64): u64;
@external("extism:host/user", "branch_done")
declare function host_branch_done(outcome: i32, data: u64): void;

// Reply statuses (abi/ABI.md §4.1).
const STATUS_OK: i32 = 0;
const STATUS_EXECUTE: i32 = 1;
const STATUS_STEP_FAILED: i32 = 2;
const STATUS_TIMEOUT: i32 = 3;
const STATUS_ERROR: i32 = 4;
const STATUS_CANCELLED: i32 = 5;
const STATUS_QUERY: i32 = 6;
const STATUS_BRANCH: i32 = 7;

// QueryFn answers a query (abi/ABI.md §4.17) from its argument's JSON ("null" when none) with
// the result's JSON. It reads the workflow's state from module globals: an instance is reset
// before every pass, so they hold this pass's state only.
export type QueryFn = (argJSON: string) => string;

const queryNames: string[] = [];
const queryFns: QueryFn[] = [];

// onQuery registers fn as the answer to the query name; registering name again replaces it.
export function onQuery(name: string, fn: QueryFn): void {
  for (let i = 0; i < queryNames.length; i++) {
    if (queryNames[i] == name) {
      queryFns[i] = fn;
      return;
    }
  }
  queryNames.push(name);
  queryFns.push(fn);
}

// answered answers the query a reply of status STATUS_QUERY carries, with the handler
// registered for it, and never returns then: the host ends the pass in query_respond.
function answered(r: Reply): Reply {
  if (r.status != STATUS_QUERY) return r;
  const q = parse(r.data);
  const name = q == null ? "" : q.getString("name");
  let arg = "null";
  if (q != null) {
    const a = q.get("arg");
    if (a != null) arg = stringifyValue(a);
  }
  for (let i = 0; i < queryNames.length; i++) {
    if (queryNames[i] != name) continue;
    const block = toBlock(queryFns[i](arg));
    host_query_respond(0, block);
    unreachable();
  }
  const block = toBlock(ErrorInfo.of("unknown_query", "this workflow has no query " + quote(name)).toJSON());
  host_query_respond(1, block);
  unreachable();
  return r;
}

// toBlock copies s (UTF-8) into a new Extism memory block, eight bytes per kernel call where it
// can (the PDK's Memory.allocateBytes makes one call per byte); 0 stands for no data.
export function toBlock(s: string): u64 {
  const data = Uint8Array.wrap(String.UTF8.encode(s));
  const n = data.length;
  if (n == 0) return 0;
  const offset = alloc(<u64>n);
  const base = data.dataStart;
  let i = 0;
  for (; i + 8 <= n; i += 8) store_u64(offset + <u64>i, load<u64>(base + <usize>i));
  for (; i < n; i++) store_u8(offset + <u64>i, load<u8>(base + <usize>i));
  return offset;
}

// fromBlock reads a block as UTF-8 and frees it.
export function fromBlock(offset: u64): string {
  if (offset == 0) return "";
  const n = <i32>length(offset);
  const out = new Uint8Array(n);
  const base = out.dataStart;
  let i = 0;
  for (; i + 8 <= n; i += 8) store<u64>(base + <usize>i, load_u64(offset + <u64>i));
  for (; i < n; i++) store<u8>(base + <usize>i, load_u8(offset + <u64>i));
  free(offset);
  return String.UTF8.decode(out.buffer);
}

function release(offset: u64): void {
  if (offset != 0) free(offset);
}

// Reply is a host function's answer: a status and its data.
class Reply {
  status: i32;
  data: string;

  constructor(r: u64) {
    this.status = <i32>(<u32>r);
    this.data = fromBlock(r >> 32);
  }
}

// ErrorInfo is the ABI's error shape.
export class ErrorInfo {
  code: string = "";
  message: string = "";
  nonRetryable: bool = false;

  static of(code: string, message: string): ErrorInfo {
    const e = new ErrorInfo();
    e.code = code;
    e.message = message;
    return e;
  }

  static decode(json: string): ErrorInfo {
    const e = new ErrorInfo();
    const v = parse(json);
    if (v == null) {
      e.message = json;
      return e;
    }
    e.code = v.getString("code");
    e.message = v.getString("message");
    return e;
  }

  toJSON(): string {
    const o = new Obj();
    if (this.code != "") o.str("code", this.code);
    o.str("message", this.message);
    if (this.nonRetryable) o.bool("nonRetryable", true);
    return o.toString();
  }

  // text is how the Go examples print an error: "code: message", or the message alone.
  text(): string {
    return this.code == "" ? this.message : this.code + ": " + this.message;
  }
}

// Result is how a workflow ends: its output JSON, or an error.
export class Result {
  output: string = "null";
  error: ErrorInfo | null = null;

  static ok(json: string): Result {
    const r = new Result();
    r.output = json;
    return r;
  }

  static err(e: ErrorInfo): Result {
    const r = new Result();
    r.error = e;
    return r;
  }

  // failedStep is the error of a workflow that returns a step's final failure, worded as the
  // Go SDK's StepError.
  static failedStep(s: Step): Result {
    const e = s.error!;
    return Result.err(ErrorInfo.of(e.code, "step " + s.name + " failed: " + e.text()));
  }
}

// Retry is a step's retry policy.
export class Retry {
  attempts: i32 = 0;
  backoff: string = "";
  baseMs: i64 = 0;
  // onExhausted is what the step does when its attempts run out: "fail" (the default) or
  // "pause" (the run pauses for an operator to resume, which tries the step once more).
  onExhausted: string = "";

  constructor(attempts: i32, backoff: string, baseMs: i64, onExhausted: string = "") {
    this.attempts = attempts;
    this.backoff = backoff;
    this.baseMs = baseMs;
    this.onExhausted = onExhausted;
  }

  toJSON(): string {
    const o = new Obj();
    if (this.attempts != 0) o.int("attempts", this.attempts);
    if (this.backoff != "") o.str("backoff", this.backoff);
    if (this.baseMs != 0) o.int("baseMs", this.baseMs);
    if (this.onExhausted != "") o.str("onExhausted", this.onExhausted);
    return o.toString();
  }
}

// Step is one durable step of the pass (abi/ABI.md §4.4, §4.5).
export class Step {
  name: string;
  status: i32;
  attempt: i32 = 1;
  output: Value | null = null;
  error: ErrorInfo | null = null;

  constructor(name: string, status: i32, data: string) {
    this.name = name;
    this.status = status;
    this.settle(status, data, data);
    if (status == STATUS_EXECUTE) {
      const v = parse(data);
      if (v != null && v.getInt("attempt") > 0) this.attempt = <i32>v.getInt("attempt");
    }
  }

  // mustRun says the step has no journaled outcome: run its body now and end it with ok or err.
  mustRun(): bool {
    return this.status == STATUS_EXECUTE;
  }

  failed(): bool {
    return this.error != null;
  }

  // ok ends the step with its output JSON. The workflow goes on with the output decoded from
  // that JSON, as a replay decodes it from the journal.
  ok(json: string): void {
    const block = toBlock(json);
    const r = new Reply(host_step_done(0, block));
    release(block);
    this.settle(r.status, json, r.data);
  }

  // err ends the step with an error; with attempts left, the host suspends the run here and
  // the step runs again in a later pass.
  err(code: string, message: string): void {
    const block = toBlock(ErrorInfo.of(code, message).toJSON());
    const r = new Reply(host_step_done(1, block));
    release(block);
    this.settle(r.status, "", r.data);
  }

  // errFinal ends the step with an error that is not retried.
  errFinal(code: string, message: string): void {
    const info = ErrorInfo.of(code, message);
    info.nonRetryable = true;
    const block = toBlock(info.toJSON());
    const r = new Reply(host_step_done(1, block));
    release(block);
    this.settle(r.status, "", r.data);
  }

  private settle(status: i32, output: string, data: string): void {
    this.status = status;
    if (status == STATUS_OK) {
      this.output = parse(output);
      if (this.output == null) this.error = ErrorInfo.of("decode", "decode step output: invalid JSON");
    } else if (status == STATUS_STEP_FAILED) {
      this.error = ErrorInfo.decode(data);
    } else if (status != STATUS_EXECUTE) {
      this.error = ErrorInfo.of("abi", "unexpected reply status " + status.toString());
    }
  }
}

// step begins the durable step name; timeoutMs > 0 bounds each attempt (abi/ABI.md §4.4).
export function step(name: string, retry: Retry | null = null, timeoutMs: i64 = 0): Step {
  const nameBlock = toBlock(name);
  const opts = new Obj();
  if (retry != null) opts.raw("retry", retry.toJSON());
  if (timeoutMs > 0) opts.int("timeoutMs", timeoutMs);
  const optsBlock = retry == null && timeoutMs <= 0 ? <u64>0 : toBlock(opts.toString());
  const r = answered(new Reply(host_step_run(nameBlock, optsBlock)));
  release(nameBlock);
  release(optsBlock);
  return new Step(name, r.status, r.data);
}

// sleep suspends the run for ms milliseconds, durably.
// It returns null once the time has passed, or the run's cancellation (abi/ABI.md §4.15).
export function sleep(name: string, ms: i64): ErrorInfo | null {
  const block = toBlock(name);
  const r = answered(new Reply(host_sleep(block, ms)));
  release(block);
  if (r.status == STATUS_CANCELLED) return cancelled("sleep " + name, r.data);
  return null;
}

// cancelled is the error a call (what) answered with the run's cancellation: code cancelled,
// so a workflow that returns it ends the run cancelled.
function cancelled(what: string, data: string): ErrorInfo {
  const info = ErrorInfo.decode(data);
  const e = ErrorInfo.of("cancelled", what + ": " + (info.message != "" ? info.message : "the run was cancelled"));
  e.nonRetryable = true;
  return e;
}

// Wait is the outcome of waitForEvent: the event's payload, or a timeout.
export class Wait {
  timedOut: bool = false;
  payload: Value | null = null;
  error: string = "";
  // cancelled is the run's cancellation, when it ended the wait.
  cancelled: ErrorInfo | null = null;
}

// waitForEvent waits for an event named event whose payload contains matchJSON (an object),
// or for timeoutMs.
export function waitForEvent(name: string, event: string, matchJSON: string, timeoutMs: i64): Wait {
  const opts = new Obj().str("event", event).raw("match", matchJSON).int("timeoutMs", timeoutMs > 1 ? timeoutMs : 1);
  const nameBlock = toBlock(name);
  const optsBlock = toBlock(opts.toString());
  const r = answered(new Reply(host_wait_event(nameBlock, optsBlock)));
  release(nameBlock);
  release(optsBlock);
  const w = new Wait();
  if (r.status == STATUS_TIMEOUT) {
    w.timedOut = true;
  } else if (r.status == STATUS_CANCELLED) {
    w.cancelled = cancelled("wait " + name, r.data);
  } else if (r.status == STATUS_OK) {
    w.payload = parse(r.data);
    if (w.payload == null) w.error = "wait " + name + ": decode event payload: invalid JSON";
  } else {
    w.error = "wait " + name + ": unexpected reply status " + r.status.toString();
  }
  return w;
}

// log writes an info record to the host's log.
export function log(message: string): void {
  const block = toBlock(message);
  host_log(0, block);
  release(block);
}

// logError writes an error record.
export function logError(message: string): void {
  const block = toBlock(message);
  host_log(2, block);
  release(block);
}

// finish reports how the pass ended.
export function finish(r: Result): void {
  if (r.error != null) {
    const e = r.error!;
    host_fail(toBlock(e.toJSON()));
    return;
  }
  host_complete(toBlock(r.output));
}

// Declaration of a workflow.
export class Workflow {
  name: string;
  version: string;
  retentionDays: i32;
  triggers: string[];
  run: (input: Value) => Result;
  flow: Flow | null = null;
  onEnd: Hook[] = [];

  constructor(name: string, version: string, retentionDays: i32, triggers: string[], run: (input: Value) => Result) {
    this.name = name;
    this.version = version;
    this.retentionDays = retentionDays;
    this.triggers = triggers;
    this.run = run;
  }

  toJSON(): string {
    const o = new Obj().str("name", this.name).str("version", this.version);
    if (this.retentionDays != 0) o.int("retentionDays", this.retentionDays);
    if (this.triggers.length > 0) {
      const quoted: string[] = [];
      for (let i = 0; i < this.triggers.length; i++) quoted.push(quote(this.triggers[i]));
      o.raw("triggers", "[" + quoted.join(",") + "]");
    }
    const f = this.flow;
    if (f != null) o.raw("flow", sdkStringify(f.toJSON()));
    if (this.onEnd.length > 0) {
      const hooks = SDKValue.array();
      for (let i = 0; i < this.onEnd.length; i++) hooks.push(this.onEnd[i].toJSON());
      o.raw("onEnd", sdkStringify(hooks));
    }
    return o.toString();
  }

  // withFlow declares the workflow's flow control (abi/ABI.md §7).
  withFlow(f: Flow): Workflow {
    this.flow = f;
    return this;
  }

  // withOnEnd declares the workflow's completion hooks (abi/ABI.md §7).
  withOnEnd(hooks: Hook[]): Workflow {
    this.onEnd = hooks;
    return this;
  }

  // check is the SDK's rules for flow and onEnd; "" when the declaration has no fault.
  check(): string {
    const f = this.flow;
    if (f != null) {
      const e = f.check();
      if (e.length > 0) return "workflow " + quote(this.name) + ": " + e;
    }
    if (this.onEnd.length > MAX_HOOKS) {
      return "workflow " + quote(this.name) + ": onEnd has " + this.onEnd.length.toString() + " hooks, the limit is " + MAX_HOOKS.toString();
    }
    for (let i = 0; i < this.onEnd.length; i++) {
      const e = this.onEnd[i].check();
      if (e.length > 0) return "workflow " + quote(this.name) + ": onEnd[" + i.toString() + "]: " + e;
    }
    return "";
  }
}

// Sent is what event_send answered: the host's EventSent JSON, or its refusal.
export class Sent {
  json: string = "";
  error: ErrorInfo | null = null;
}

// sendEvent sends an event from inside a step's body (abi/ABI.md §4.13): req is an EventSend
// JSON, to one run or broadcast to the tenant. It lands once however often the body runs.
export function sendEvent(req: string): Sent {
  const block = toBlock(req);
  const r = new Reply(host_event_send(block));
  release(block);
  const out = new Sent();
  if (r.status == STATUS_OK) out.json = r.data;
  else if (r.status == STATUS_ERROR) out.error = ErrorInfo.decode(r.data);
  else out.error = ErrorInfo.of("event_refused", "unexpected reply status " + r.status.toString());
  return out;
}

// continueAsNew ends the run and starts a fresh run of the same workflow with input (JSON) and
// an empty journal (abi/ABI.md §4.14). It never returns: end a workflow with
// `return continueAsNew(next)`.
export function continueAsNew(input: string): Result {
  host_continue_as_new(toBlock(new Obj().raw("input", input).toString()));
  return unreachable();
}

// runChild starts a run of workflow with inputJSON as the durable step name (abi/ABI.md §4.16)
// and, unless detach, waits for its end: a Step whose output is the child's output (detached:
// {"runId": ...}) or whose error is the step's (child_failed, child_refused, cancelled). id, when
// not empty, is the child's id instead of the derived one.
export function runChild(name: string, workflow: string, inputJSON: string, id: string = "", detach: bool = false): Step {
  const req = new Obj().str("workflow", workflow).raw("input", inputJSON);
  if (id != "") req.str("id", id);
  if (detach) req.bool("detach", true);
  const nameBlock = toBlock(name);
  const reqBlock = toBlock(req.toString());
  const r = answered(new Reply(host_child_run(nameBlock, reqBlock)));
  release(nameBlock);
  release(reqBlock);
  return new Step(name, r.status, r.data);
}

// BranchFn runs branch i of a parallel step and returns the branch's end. It reads what it
// needs of the workflow from module globals (it cannot capture locals): the branch's pass ran
// the workflow up to the parallel call, so they hold what they held there.
export type BranchFn = (i: i32) => Result;

// parallel runs n branches concurrently as the durable step name and joins them as join says:
// "all", "first" or "allSettled" (abi/ABI.md §4.18); maxConcurrent > 0 bounds how many run at
// once. In the caller it returns a Step whose output is the ParallelResult
// ({"branches": [...], "first": i}) or whose error is the step's (branch_failed, cancelled). In
// a branch's own pass the host answers BRANCH instead: branch(i) runs, and its Result ends the
// pass (branch_done), so parallel never returns there.
export function parallel(name: string, n: i32, join: string, maxConcurrent: i32, branch: BranchFn): Step {
  const req = new Obj().int("branches", n).str("join", join == "" ? "all" : join).int("maxConcurrent", maxConcurrent);
  const nameBlock = toBlock(name);
  const reqBlock = toBlock(req.toString());
  const r = answered(new Reply(host_parallel_run(nameBlock, reqBlock)));
  release(nameBlock);
  release(reqBlock);
  if (r.status != STATUS_BRANCH) return new Step(name, r.status, r.data);
  const v = parse(r.data);
  let b: Value | null = null;
  if (v != null) b = v.get("branch");
  let res: Result;
  if (b == null || b.kind != NUMBER || b.n != Math.floor(b.n) || b.n < 0 || b.n >= <f64>n) {
    const e = ErrorInfo.of("abi", "the host answered BRANCH with " + r.data + ", not a branch of " + n.toString());
    e.nonRetryable = true;
    res = Result.err(e);
  } else {
    res = branch(<i32>b.n);
  }
  if (res.error != null) host_branch_done(1, toBlock(res.error!.toJSON()));
  else host_branch_done(0, toBlock(res.output));
  return unreachable();
}
