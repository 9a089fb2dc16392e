// The workflow API: registration, the Context a body receives, durable steps, sleeps and waits.
// It mirrors guest-sdk/go/wf.go verb for verb; where AssemblyScript differs (no closures over
// locals, no exceptions, no reflection) RATIONALE.md says what was chosen instead.

import * as raw from "./raw";
import { CODE_CANCELLED, Failure, Result } from "./errors";
import { Kind, parseBytes, quote, stringify, Value } from "./json";
import { enterStep, leaveStep } from "./state";
import { takeReply } from "./reply";
import { EventResult, eventSend, HttpRequest, HttpResult, httpRequest, SecretResult, secretGet } from "./capabilities";
import { branchIndex, parallelRequest } from "./parallel";
import { checkName, Flow, Hook, MAX_HOOKS } from "./flow";

/** Backoff names how the delay between a step's attempts grows. */
export namespace Backoff {
  export const Fixed = "fixed";
  export const Linear = "linear";
  export const Exp = "exp";
}

/**
 * RetryPolicy says how often and how fast a failed step is tried again. Zero fields take the
 * workflow's policy, then the host's default (3 attempts, exponential 1 s to 60 s, 20% jitter).
 */
export class RetryPolicy {
  /** attempts counts every try, the first one included. */
  attempts: i32 = 0;
  /** backoff is Backoff.Fixed, Backoff.Linear or Backoff.Exp. */
  backoff: string = "";
  baseMs: i64 = 0;
  maxMs: i64 = 0;
  /** jitter is the fraction (0..1) by which a delay varies at random. */
  jitter: f64 = 0;
  /**
   * onExhausted is what the step does when its attempts run out: "fail" (the default: the error
   * is returned to the workflow) or "pause" (the run pauses for an operator to fix the cause and
   * resume it, which tries the step once more). Empty takes the workflow's.
   */
  onExhausted: string = "";
  /**
   * nonRetryable lists error codes that fail the step at once, as Failure.final() does. The
   * SDK applies it before it reports the error; the host never sees the list.
   */
  nonRetryable: string[] = [];

  toJSON(): Value {
    const v = Value.object();
    if (this.attempts != 0) v.setInt("attempts", this.attempts);
    if (this.backoff.length > 0) v.setString("backoff", this.backoff);
    if (this.baseMs != 0) v.setInt("baseMs", this.baseMs);
    if (this.maxMs != 0) v.setInt("maxMs", this.maxMs);
    if (this.jitter != 0) v.setNumber("jitter", this.jitter);
    if (this.onExhausted.length > 0) v.setString("onExhausted", this.onExhausted);
    return v;
  }
}

/** StepOptions adjusts one step. */
export class StepOptions {
  /** retry is the step's retry policy, over the workflow's, field by field. */
  retry: RetryPolicy | null = null;
  /**
   * timeoutMs bounds each attempt: an attempt whose fn has not returned within it is stopped
   * by the host where it is, fails with the code "timeout" and is retried by the step's policy
   * (abi/ABI.md §4.4); 0 is no timeout.
   */
  timeoutMs: i64 = 0;
}

/** WaitOptions adjusts a waitForEvent. */
export class WaitOptions {
  /** match resolves the wait only with an event whose payload is a JSON superset of it. */
  match: Value | null = null;
  /** timeoutMs gives up waiting after that long; 0 waits forever. */
  timeoutMs: i64 = 0;
}

/** ChildOptions adjust a child run (Context.runChild, Context.startChild; abi/ABI.md §4.16). */
export class ChildOptions {
  /**
   * id is the child's id (its idempotency key) instead of the derived
   * "<parent run id>:<step key>"; an id another run holds fails the step with child_refused.
   */
  id: string = "";
  /** version runs the child on that version of its workflow instead of the latest. */
  version: string = "";
  /** timeoutMs is the child run's deadline after it starts (its run_timeout); 0: none. */
  timeoutMs: i64 = 0;
  /** abandonOnCancel leaves the child running when the parent is cancelled or terminated. */
  abandonOnCancel: bool = false;
}

/** WorkflowOptions are a workflow's optional declarations (abi/ABI.md §7). */
export class WorkflowOptions {
  /** retentionDays keeps a finished run this long; 0 takes the operator's default. */
  retentionDays: i32 = 0;
  /** retry is the default policy of the workflow's steps. */
  retry: RetryPolicy | null = null;
  /** triggers are event names whose broadcast starts a run with the event's payload as input. */
  triggers: string[] = [];
  /** flow is the workflow's flow control (concurrency, rate, debounce per key, priority); null: none. */
  flow: Flow | null = null;
  /** onEnd are the workflow's completion hooks (at most 16): what starts, or which webhook is called, when a run ends. */
  onEnd: Hook[] = [];
}

/**
 * WorkflowFn is a workflow body. Outside step callbacks it must be deterministic: the host
 * replays it from the top after every suspension, feeding it the journaled results.
 */
export type WorkflowFn = (ctx: Context, input: Value) => Result;

/**
 * StepFn is a step callback. It receives the value the workflow passed to step, because an
 * AssemblyScript function cannot capture the workflow's locals.
 */
export type StepFn<A> = (sc: StepContext, arg: A) => Result;

/**
 * QueryFn answers a query (abi/ABI.md §4.17) from the state the workflow registered it with
 * and the query's argument (null when none). It cannot capture the workflow's locals, so it is
 * given them as state, as a step callback is given its arg.
 */
export type QueryFn = (state: Value, arg: Value) => Result;

/**
 * BranchFn is a parallel step's branch: it runs branch i, in a run of its own, and returns the
 * branch's output or failure. Like a StepFn it receives the value the workflow passed to
 * parallel, because it cannot capture the workflow's locals.
 */
export type BranchFn<A> = (ctx: Context, i: i32, arg: A) => Result;

/** CODE_UNKNOWN_QUERY answers a query no handler was registered for. */
export const CODE_UNKNOWN_QUERY = "unknown_query";

class QueryHandler {
  constructor(
    public name: string,
    public state: Value,
    public fn: QueryFn,
  ) {}
}

class Registered {
  constructor(
    public name: string,
    public version: string,
    public run: WorkflowFn,
    public opts: WorkflowOptions | null,
  ) {}
}

const workflows = new Array<Registered>();

/**
 * register adds a workflow to the module; call it at the top level of the entry file. A
 * declaration the host would refuse at upload (checkWorkflow), or a name registered twice,
 * aborts the module's initialisation, so the upload fails with the reason.
 */
export function register(name: string, version: string, run: WorkflowFn, opts: WorkflowOptions | null = null): void {
  const fault = checkWorkflow(name, version, opts);
  if (fault.length > 0) throw new Error("wfhost: " + fault);
  for (let i = 0; i < workflows.length; i++) {
    if (workflows[i].name == name) throw new Error("wfhost: workflow " + name + " is registered twice");
  }
  workflows.push(new Registered(name, version, run, opts));
}

/**
 * checkWorkflow applies the host's rules for a description (abi/ABI.md §7) to a workflow's
 * declaration: its name and version, its triggers' names, its flow and its hooks. It returns
 * the fault, worded as the host's, or "" for none. register calls it; a test may too. (A retry
 * policy's bounds, and what Go's URL parser refuses in a webhook, are the host's alone.)
 */
export function checkWorkflow(name: string, version: string, opts: WorkflowOptions | null): string {
  let e = checkName("workflow", name);
  if (e.length > 0) return e;
  const within = "workflow " + quote(name) + ": ";
  if (version.length == 0) return within + "version is empty";
  const n = String.UTF8.byteLength(version);
  if (n > 200) return within + "not storable: version is " + n.toString() + " bytes, the limit is 200";
  if (version.includes("\0")) return within + "not storable: version contains a NUL character";
  if (opts == null) return "";
  for (let i = 0; i < opts.triggers.length; i++) {
    e = checkName("trigger event", opts.triggers[i]);
    if (e.length > 0) return within + e;
  }
  const f = opts.flow;
  if (f != null) {
    e = f.check();
    if (e.length > 0) return within + e;
  }
  if (opts.onEnd.length > MAX_HOOKS) {
    return within + "onEnd has " + opts.onEnd.length.toString() + " hooks, the limit is " + MAX_HOOKS.toString();
  }
  for (let i = 0; i < opts.onEnd.length; i++) {
    e = opts.onEnd[i].check();
    if (e.length > 0) return within + "onEnd[" + i.toString() + "]: " + e;
  }
  return "";
}

/** describeJSON is the module's Description (abi/ABI.md §7). */
export function describeJSON(): string {
  const list = Value.array();
  for (let i = 0; i < workflows.length; i++) {
    const w = workflows[i];
    const d = Value.object().setString("name", w.name).setString("version", w.version);
    const o = w.opts;
    if (o != null) {
      if (o.retentionDays != 0) d.setInt("retentionDays", o.retentionDays);
      const r = o.retry;
      if (r != null) d.set("retry", r.toJSON());
      if (o.triggers.length > 0) {
        const t = Value.array();
        for (let k = 0; k < o.triggers.length; k++) t.push(Value.string(o.triggers[k]));
        d.set("triggers", t);
      }
      const f = o.flow;
      if (f != null) d.set("flow", f.toJSON());
      if (o.onEnd.length > 0) {
        const h = Value.array();
        for (let k = 0; k < o.onEnd.length; k++) h.push(o.onEnd[k].toJSON());
        d.set("onEnd", h);
      }
    }
    list.push(d);
  }
  // features: this SDK hands a cancellation to the workflow (abi/ABI.md §4.15) and answers
  // queries (§4.17).
  const features = Value.array();
  features.push(Value.string("cancel"));
  features.push(Value.string("query"));
  return stringify(Value.object().set("workflows", list).set("features", features));
}

/** runWorkflow runs one pass of the named workflow and reports its end to the host. */
export function runWorkflow(name: string, input: ArrayBuffer): void {
  let target: Registered | null = null;
  for (let i = 0; i < workflows.length; i++) {
    if (workflows[i].name == name) target = workflows[i];
  }
  if (target == null) {
    failWith(new Failure("unknown_workflow", "this module has no workflow " + name));
    return;
  }
  let in_ = Value.null();
  if (input.byteLength > 0) {
    const p = parseBytes(input);
    if (!p.ok) {
      failWith(new Failure("invalid_input", "decode workflow input: " + p.error).final());
      return;
    }
    in_ = p.value;
  }
  const res = target.run(new Context(name), in_);
  const err = res.error;
  if (err != null) {
    failWith(err);
    return;
  }
  const out = String.UTF8.encode(stringify(res.value));
  raw.complete(changetype<usize>(out), out.byteLength);
}

function failWith(f: Failure): void {
  const b = String.UTF8.encode(stringify(f.toInfo()));
  raw.fail(changetype<usize>(b), b.byteLength);
}

/** log writes a record to the host's log, tagged with the tenant, workflow, run and step. */
export function log(msg: string): void {
  logAt(raw.LOG_INFO, msg);
}

/** warn logs at warning level. */
export function warn(msg: string): void {
  logAt(raw.LOG_WARN, msg);
}

export function logAt(level: i32, msg: string): void {
  const b = String.UTF8.encode(msg);
  raw.log(level, changetype<usize>(b), b.byteLength);
}

/** StepContext is what a step callback receives. */
export class StepContext {
  constructor(
    /** step is the step's name. */
    public readonly step: string,
    /** attempt is 1 on the first try of the step and counts up with each retry. */
    public readonly attempt: i32,
  ) {}

  log(msg: string): void {
    logAt(raw.LOG_INFO, msg);
  }

  warn(msg: string): void {
    logAt(raw.LOG_WARN, msg);
  }

  /** http makes an outbound HTTP request through the host (see capabilities.ts). */
  http(req: HttpRequest): HttpResult {
    return httpRequest(req);
  }

  /** secret reads one of the tenant's secrets (see capabilities.ts). */
  secret(name: string): SecretResult {
    return secretGet(name);
  }

  /** signal sends an event to a run of the tenant, once however often the step runs (see capabilities.ts). */
  signal(runId: string, event: string, payload: Value): EventResult {
    return eventSend(runId, event, payload);
  }

  /** broadcast sends an event to the whole tenant, once however often the step runs (see capabilities.ts). */
  broadcast(event: string, payload: Value): EventResult {
    return eventSend("", event, payload);
  }
}

/** Context is the handle a workflow body receives; every durable call goes through it. */
export class Context {
  private queries: QueryHandler[] = [];

  constructor(
    /** workflow is the name of the running workflow. */
    public readonly workflow: string,
  ) {}

  /**
   * onQuery registers fn as the answer to the query name (abi/ABI.md §4.17): a client reads a
   * running run's state with it (POST .../runs/{id}/query/{name}, wfhost runs query). The host
   * replays the run's journal and, at the first durable call the journal does not answer,
   * calls fn(state, arg) for the handler last registered under name. state is what the
   * workflow hands it (a Value it may keep changing); fn must make no durable call: nothing it
   * does is committed. Registering name again replaces its handler.
   */
  onQuery(name: string, state: Value, fn: QueryFn): void {
    for (let i = 0; i < this.queries.length; i++) {
      if (this.queries[i].name == name) {
        this.queries[i] = new QueryHandler(name, state, fn);
        return;
      }
    }
    this.queries.push(new QueryHandler(name, state, fn));
  }

  /** childRun makes the child_run call: the ABI's ChildRun JSON, the reply as a step's. */
  private childRun(name: string, workflow: string, input: Value, detach: bool, opts: ChildOptions | null): Result {
    const req = Value.object().setString("workflow", workflow).set("input", input);
    if (opts != null) {
      if (opts.id.length > 0) req.setString("id", opts.id);
      if (opts.version.length > 0) req.setString("version", opts.version);
      if (opts.timeoutMs > 0) req.setInt("timeoutMs", opts.timeoutMs);
      if (opts.abandonOnCancel) req.setString("parentClose", "abandon");
    }
    if (detach) req.setBool("detach", true);
    const nb = String.UTF8.encode(name);
    const rb = String.UTF8.encode(stringify(req));
    const reply = raw.child_run(changetype<usize>(nb), nb.byteLength, changetype<usize>(rb), rb.byteLength);
    const status = raw.replyStatus(reply);
    const data = takeReply(reply);
    // A child step the journal has not ended is a query's frontier like any durable call
    // (abi/ABI.md §4.17): answerQuery answers it and never returns.
    if (status == raw.STATUS_QUERY) this.answerQuery(data);
    if (status == raw.STATUS_OK) return decodeOutput(name, data);
    if (status == raw.STATUS_STEP_FAILED) return Result.err(stepFailure(name, data));
    return unexpected(name, status);
  }

  /** answerQuery answers the query a reply of status STATUS_QUERY carries; it never returns. */
  private answerQuery(data: ArrayBuffer): void {
    const p = parseBytes(data);
    let name = "";
    let arg = Value.null();
    if (p.ok) {
      const n = p.value.get("name");
      if (n != null) name = n.asString();
      const a = p.value.get("arg");
      if (a != null) arg = a;
    }
    let res: Result = Result.err(new Failure(CODE_UNKNOWN_QUERY, "workflow " + this.workflow + " has no query " + quote(name)));
    for (let i = 0; i < this.queries.length; i++) {
      const h = this.queries[i];
      if (h.name == name) res = h.fn(h.state, arg);
    }
    const err = res.error;
    let outcome = raw.OUTCOME_OK;
    let text: string;
    if (err == null) {
      text = stringify(res.value);
    } else {
      outcome = raw.OUTCOME_ERROR;
      text = stringify(err.toInfo());
    }
    const b = String.UTF8.encode(text);
    raw.query_respond(outcome, changetype<usize>(b), b.byteLength);
    unreachable();
  }

  log(msg: string): void {
    logAt(raw.LOG_INFO, msg);
  }

  warn(msg: string): void {
    logAt(raw.LOG_WARN, msg);
  }

  /**
   * step runs fn(sc, arg) as a durable step: its result is journaled and on replay returned
   * without running fn again. A failure from fn is retried by the step's policy; once attempts
   * are spent (or for a final failure) step returns a Result whose error names the step, which
   * the workflow may handle or return.
   *
   * fn may run more than once (at least once, never concurrently); make its side effects
   * idempotent. The workflow sees the value parsed from the JSON the host committed, on the
   * first pass as on replay. An abort inside fn (a throw, a failed bounds check) is the
   * attempt's failure, retried like any other.
   */
  step<A>(name: string, arg: A, fn: StepFn<A>, opts: StepOptions | null = null): Result {
    let optsJSON = "";
    let policy: RetryPolicy | null = null;
    if (opts != null && (opts.retry != null || opts.timeoutMs > 0)) {
      const o = Value.object();
      if (opts.retry != null) {
        policy = opts.retry;
        o.set("retry", policy!.toJSON());
      }
      if (opts.timeoutMs > 0) o.setInt("timeoutMs", opts.timeoutMs);
      optsJSON = stringify(o);
    }
    const nb = String.UTF8.encode(name);
    const ob = String.UTF8.encode(optsJSON);
    const reply = raw.step_run(changetype<usize>(nb), nb.byteLength, changetype<usize>(ob), ob.byteLength);
    const status = raw.replyStatus(reply);
    const data = takeReply(reply);
    if (status == raw.STATUS_QUERY) this.answerQuery(data);
    if (status == raw.STATUS_OK) return decodeOutput(name, data);
    if (status == raw.STATUS_STEP_FAILED) return Result.err(stepFailure(name, data));
    if (status != raw.STATUS_EXECUTE) return unexpected(name, status);

    let attempt: i32 = 1;
    const a = parseBytes(data);
    if (a.ok) {
      const n = a.value.get("attempt");
      if (n != null && n.asInt() > 1) attempt = <i32>n.asInt();
    }
    enterStep(name);
    const res = fn(new StepContext(name, attempt), arg);
    leaveStep();

    let outcome = raw.OUTCOME_OK;
    let result: string;
    const err = res.error;
    if (err == null) {
      result = stringify(res.value);
    } else {
      outcome = raw.OUTCOME_ERROR;
      if (policy != null && policy.nonRetryable.includes(err.code)) err.nonRetryable = true;
      result = stringify(err.toInfo());
    }
    const rb = String.UTF8.encode(result);
    const done = raw.step_done(outcome, changetype<usize>(rb), rb.byteLength);
    const doneStatus = raw.replyStatus(done);
    const doneData = takeReply(done);
    if (doneStatus == raw.STATUS_OK) return decodeOutput(name, rb);
    if (doneStatus == raw.STATUS_STEP_FAILED) return Result.err(stepFailure(name, doneData));
    return unexpected(name, doneStatus);
  }

  /**
   * sleep suspends the run for ms milliseconds, durably: a crash does not shorten or restart it.
   * It is ok once the time has passed, or the run's cancellation (`error.isCancelled`) when the
   * run is cancelled during it (abi/ABI.md §4.15): the workflow may compensate, then return it.
   */
  sleep(name: string, ms: i64): Result {
    const nb = String.UTF8.encode(name);
    const reply = raw.sleep(changetype<usize>(nb), nb.byteLength, ms);
    const data = takeReply(reply);
    if (raw.replyStatus(reply) == raw.STATUS_QUERY) this.answerQuery(data);
    return slept(name, raw.replyStatus(reply), data);
  }

  /**
   * continueAsNew ends this run and starts a fresh run of the same workflow with input and an
   * empty journal, linked to this one (abi/ABI.md §4.14): the way a workflow that loops forever
   * keeps its journal short. The new run takes this run's idempotency key and the events
   * signalled to it that no wait took; with latestVersion it runs the workflow's most recently
   * deployed version. It never returns: end the workflow with `return ctx.continueAsNew(next)`.
   * Not inside a step callback.
   */
  continueAsNew(input: Value, latestVersion: bool = false): Result {
    const req = Value.object().set("input", input);
    if (latestVersion) req.setBool("latestVersion", true);
    const rb = String.UTF8.encode(stringify(req));
    raw.continue_as_new(changetype<usize>(rb), rb.byteLength);
    return unreachable();
  }

  /**
   * runChild starts a run of workflow with input as the durable step name and waits for its
   * end, the parent holding no instance meanwhile (abi/ABI.md §4.16): the child's output, or a
   * failure with code child_failed (the child failed or was cancelled; details: its runId,
   * status and error), child_refused (no such workflow, or the id is another run's) or
   * cancelled (this run was cancelled while it waited: the child is cancelled too, unless
   * abandonOnCancel). Not inside a step callback.
   */
  runChild(name: string, workflow: string, input: Value, opts: ChildOptions | null = null): Result {
    return this.childRun(name, workflow, input, false, opts);
  }

  /**
   * startChild starts a run of workflow with input as the durable step name and returns at
   * once, without waiting for it: Result.ok with the child's run id as a string. Failures are
   * runChild's but child_failed.
   */
  startChild(name: string, workflow: string, input: Value, opts: ChildOptions | null = null): Result {
    const r = this.childRun(name, workflow, input, true, opts);
    if (!r.ok) return r;
    const id = r.value.get("runId");
    return Result.ok(id != null ? id : Value.string(""));
  }

  /**
   * parallel runs n branches (1 to 64) concurrently as the durable step name and joins them as
   * join says (Join.All, Join.First or Join.AllSettled; abi/ABI.md §4.18); maxConcurrent > 0
   * bounds how many run at once (0: the host's bound, 16). Branch i runs fn(ctx, i, arg) in a
   * run of its own whose journal starts as a copy of this run's: what the workflow did before
   * the call is replayed, not done again, and fn may make any durable call (steps, sleeps,
   * waits, children, another parallel step under another name). What fn returns is the
   * branch's output or failure. fn is called only in a branch's own run; the caller waits,
   * holding no instance, and gets Result.ok with the ParallelResult JSON (read it with
   * ParallelResult.of), or a failure with code branch_failed (Join.All: a branch failed;
   * Join.First: every branch failed; details: the branch, its runId, status and error) or
   * cancelled (this run was cancelled: its branches are cancelled too). Not inside a step
   * callback.
   */
  parallel<A>(name: string, n: i32, join: string, maxConcurrent: i32, arg: A, fn: BranchFn<A>): Result {
    const nb = String.UTF8.encode(name);
    const rb = String.UTF8.encode(parallelRequest(n, join, maxConcurrent));
    const reply = raw.parallel_run(changetype<usize>(nb), nb.byteLength, changetype<usize>(rb), rb.byteLength);
    const status = raw.replyStatus(reply);
    const data = takeReply(reply);
    if (status == raw.STATUS_QUERY) this.answerQuery(data);
    if (status == raw.STATUS_OK) return decodeOutput(name, data);
    if (status == raw.STATUS_STEP_FAILED) return Result.err(stepFailure(name, data));
    if (status != raw.STATUS_BRANCH) return unexpected(name, status);

    // This pass is branch i's: run it and end the pass with its end (branch_done never
    // returns), so the code after the call runs only in the caller.
    const p = parseBytes(data);
    const i = p.ok ? branchIndex(p.value, n) : -1;
    let res: Result;
    if (i < 0) {
      res = Result.err(new Failure("abi", "the host answered BRANCH with " + String.UTF8.decode(data) + ", not a branch of " + n.toString()).final());
    } else {
      res = fn(this, i, arg);
    }
    let outcome = raw.OUTCOME_OK;
    let text: string;
    const err = res.error;
    if (err == null) {
      text = stringify(res.value);
    } else {
      outcome = raw.OUTCOME_ERROR;
      text = stringify(err.toInfo());
    }
    const b = String.UTF8.encode(text);
    raw.branch_done(outcome, changetype<usize>(b), b.byteLength);
    return unreachable();
  }

  /** sleepUntil suspends the run until the Unix time unixMs (milliseconds). */
  sleepUntil(name: string, unixMs: i64): Result {
    const nb = String.UTF8.encode(name);
    const reply = raw.sleep_until(changetype<usize>(nb), nb.byteLength, unixMs);
    const data = takeReply(reply);
    if (raw.replyStatus(reply) == raw.STATUS_QUERY) this.answerQuery(data);
    return slept(name, raw.replyStatus(reply), data);
  }

  /**
   * waitForEvent suspends the run until an event named event arrives (one sent to this run,
   * before or after the wait was reached, or a broadcast since the run started) and returns its
   * payload, or until the timeout passes (timedOut true).
   */
  waitForEvent(name: string, event: string, opts: WaitOptions | null = null): WaitResult {
    const o = Value.object().setString("event", event);
    if (opts != null) {
      const m = opts.match;
      if (m != null && !m.isNull) {
        if (m.kind != Kind.Object) {
          return new WaitResult(Value.null(), false, new Failure("invalid_match", "wait " + name + ": match must be a JSON object"));
        }
        o.set("match", m);
      }
      // Like the Go SDK: a timeout below a millisecond still times out, never waits forever.
      if (opts.timeoutMs != 0) o.setInt("timeoutMs", opts.timeoutMs < 1 ? 1 : opts.timeoutMs);
    }
    const nb = String.UTF8.encode(name);
    const ob = String.UTF8.encode(stringify(o));
    const reply = raw.wait_event(changetype<usize>(nb), nb.byteLength, changetype<usize>(ob), ob.byteLength);
    const status = raw.replyStatus(reply);
    const data = takeReply(reply);
    if (status == raw.STATUS_QUERY) this.answerQuery(data);
    if (status == raw.STATUS_TIMEOUT) return new WaitResult(Value.null(), true, null);
    if (status == raw.STATUS_CANCELLED) return new WaitResult(Value.null(), false, cancelled("wait " + name, data));
    if (status == raw.STATUS_OK) {
      const p = parseBytes(data);
      if (!p.ok) return new WaitResult(Value.null(), false, new Failure("decode", "wait " + name + ": decode event payload: " + p.error));
      return new WaitResult(p.value, false, null);
    }
    return new WaitResult(Value.null(), false, new Failure("abi", "wait " + name + ": unexpected reply status " + status.toString()));
  }
}

/** WaitResult is the end of a waitForEvent: the event's payload, a timeout, or an error. */
export class WaitResult {
  constructor(
    public payload: Value,
    public timedOut: bool,
    public error: Failure | null,
  ) {}
}

function decodeOutput(name: string, data: ArrayBuffer): Result {
  const p = parseBytes(data);
  if (!p.ok) return Result.err(stepFailureOf(name, "decode", "decode step output: " + p.error));
  return Result.ok(p.value);
}

function stepFailure(name: string, data: ArrayBuffer): Failure {
  const text = String.UTF8.decode(data);
  const p = parseBytes(data);
  const f = Failure.fromInfo(p.value, text);
  f.step = name;
  return f;
}

function stepFailureOf(name: string, code: string, message: string): Failure {
  const f = new Failure(code, message);
  f.step = name;
  return f;
}

function unexpected(name: string, status: i32): Result {
  return Result.err(stepFailureOf(name, "abi", "unexpected reply status " + status.toString()));
}

/** slept is the end of a sleep the host answered with status and data. */
function slept(name: string, status: i32, data: ArrayBuffer): Result {
  if (status == raw.STATUS_CANCELLED) return Result.err(cancelled("sleep " + name, data));
  return Result.ok(Value.null());
}

/**
 * cancelled is the failure a call (what) answered with the run's cancellation: its code is
 * "cancelled", so a workflow that returns it ends the run cancelled.
 */
function cancelled(what: string, data: ArrayBuffer): Failure {
  const p = parseBytes(data);
  let msg = "the run was cancelled";
  if (p.ok) {
    const m = p.value.get("message");
    if (m != null && m.asString().length > 0) msg = m.asString();
  }
  return new Failure(CODE_CANCELLED, what + ": " + msg).final();
}
