// The example workflows of examples/wasm/go, step for step: onboarding, order-saga, poll,
// relay, steps, ticker, timeouts, charge-or-pause, child, parent, parallel and digest, with
// the same names, versions, step keys, inputs, outputs, errors, flow control and hooks.

// The AssemblyScript example's SHA-256: the same user ids as every other example.
import { hex, sha256 } from "../../assemblyscript/assembly/sha256";
import { ARRAY, NUMBER, Obj, Value, quote, stringifyValue } from "./json";
import { ErrorInfo, Result, Retry, Workflow, continueAsNew, log, onQuery, parallel, runChild, sendEvent, sleep, step, waitForEvent } from "./wf";
import { Concurrency, Debounce, Flow, Hook, Rate, RunEnd } from "../../../../guest-sdk/assemblyscript/assembly/flow";

// The onboarding run's stage and user, which the query "status" reads (abi/ABI.md §4.17).
let onboardingStage = "";
let onboardingUser = "";

// The parallel workflow's failing branches, which its branches read (a branch function cannot
// capture the workflow's locals; the branch's pass set them before it reached the call).
let parallelFail: i64[] = [];

export const workflows: Workflow[] = [
  new Workflow("onboarding", "1", 30, ["user.signed_up"], onboarding),
  new Workflow("poll", "1", 0, [], poll),
  new Workflow("relay", "1", 0, [], relay),
  new Workflow("order-saga", "1", 90, [], orderSaga),
  new Workflow("steps", "1", 0, [], steps),
  new Workflow("ticker", "1", 0, [], ticker),
  new Workflow("timeouts", "1", 0, [], timeouts),
  new Workflow("charge-or-pause", "1", 0, [], chargeOrPause),
  new Workflow("child", "1", 0, [], child),
  new Workflow("parent", "1", 0, [], parent),
  new Workflow("parallel", "1", 0, [], parallelWorkflow),
  new Workflow("digest", "1", 0, [], digest).withFlow(digestFlow()).withOnEnd(digestHooks()),
];

// digestFlow is the digest workflow's flow control, per customer: one digest at a time, at
// most ten a minute, a burst of starts within five seconds makes one run, and digests yield to
// other work by 30 seconds (examples/wasm/go/workflows_with_flow.go).
function digestFlow(): Flow {
  const f = new Flow();
  f.concurrency = new Concurrency("$.customerId", 1);
  f.rate = new Rate("$.customerId", 10, 60000);
  f.debounce = new Debounce("$.customerId", 5000);
  f.priority = -30;
  return f;
}

// digestHooks: a sent digest starts a follow-up run (the steps example stands in for one); a
// digest that failed or was cancelled is posted to the operators' webhook.
function digestHooks(): Hook[] {
  return [
    Hook.start([RunEnd.Completed], "steps", "1"),
    Hook.webhook([RunEnd.Failed, RunEnd.Cancelled], "https://ops.example.com/wfhost/digest"),
  ];
}

// digest sends a customer's digest in one step; its declarations are the point of it.
function digest(input: Value): Result {
  const customerId = input.getString("customerId");
  const s = step("send-digest");
  if (s.mustRun()) s.ok(new Obj().str("customerId", customerId).bool("sent", true).toString());
  if (s.failed()) return Result.failedStep(s);
  return Result.ok(stringifyValue(s.output!));
}

// chargeOrPause charges with two attempts and pauses the run when both fail (onExhausted
// "pause"), for an operator to fix the cause and resume it: the resume tries the charge once
// more. Each attempt logs "charge attempt N".
function chargeOrPause(input: Value): Result {
  const failAttempts = input.getInt("failAttempts");
  const charge = step("charge", new Retry(2, "fixed", 10, "pause"));
  if (charge.mustRun()) {
    log("charge attempt " + charge.attempt.toString());
    if (<i64>charge.attempt <= failAttempts) {
      charge.err("declined", "card declined on attempt " + charge.attempt.toString());
    } else {
      charge.ok(quote("ch-1"));
    }
  }
  if (charge.failed()) return Result.failedStep(charge);
  const ship = step("ship");
  if (ship.mustRun()) ship.ok("true");
  if (ship.failed()) return Result.failedStep(ship);
  return Result.ok(new Obj().str("charge", charge.output!.s).bool("shipped", true).toString());
}

// onboardingStatus answers the query "status": the stage, the user, and the argument echoed.
function onboardingStatus(arg: string): string {
  return new Obj().str("stage", onboardingStage).str("userId", onboardingUser).raw("arg", arg).toString();
}

function onboarding(input: Value): Result {
  onboardingStage = "creating-user";
  onboardingUser = "";
  onQuery("status", onboardingStatus);
  const email = input.getString("email");
  const delayMs = input.getInt("delayMs");
  const failWelcome = input.getInt("failWelcome");
  const verifyTimeoutMs = input.getInt("verifyTimeoutMs");

  const create = step("create-user");
  if (create.mustRun()) {
    const id = "u-" + hex(sha256(Uint8Array.wrap(String.UTF8.encode(email.toLowerCase()))).subarray(0, 6));
    create.ok(new Obj().str("id", id).str("email", email).toString());
  }
  if (create.failed()) return Result.failedStep(create);
  const userID = create.output!.getString("id");
  const userEmail = create.output!.getString("email");
  onboardingStage = "welcome-delay";
  onboardingUser = userID;

  const slept = sleep("welcome-delay", delayMs > 0 ? delayMs : 1000);
  if (slept != null) return Result.err(slept); // cancelled

  onboardingStage = "welcoming";
  const welcome = step("send-welcome", new Retry(5, "fixed", 20));
  if (welcome.mustRun()) {
    if (<i64>welcome.attempt <= failWelcome) {
      welcome.err("smtp_unavailable", "mail server refused attempt " + welcome.attempt.toString());
    } else {
      log("welcome mail sent to " + userEmail + " on attempt " + welcome.attempt.toString());
      welcome.ok('"sent"');
    }
  }
  if (welcome.failed()) return Result.failedStep(welcome);

  const match = new Obj().str("userId", userID).toString();
  onboardingStage = "awaiting-verify";
  const w = waitForEvent("await-verify", "verify", match, verifyTimeoutMs > 0 ? verifyTimeoutMs : 24 * 3600 * 1000);
  if (w.cancelled != null) return Result.err(w.cancelled!);
  if (w.error != "") return Result.err(ErrorInfo.of("", w.error));
  if (!w.timedOut) {
    const via = w.payload!.getString("via");
    return Result.ok(onboardingResult(userID, true, false, "verified via " + via));
  }
  onboardingStage = "nudging";
  const nudge = step("send-nudge");
  if (nudge.mustRun()) {
    log("nudging " + userEmail + " to verify");
    nudge.ok("true");
  }
  if (nudge.failed()) return Result.failedStep(nudge);
  return Result.ok(onboardingResult(userID, false, true, "nudged"));
}

function onboardingResult(userID: string, verified: bool, nudged: bool, outcome: string): string {
  return new Obj().str("userId", userID).bool("verified", verified).bool("nudged", nudged).str("outcome", outcome).toString();
}

// poll checks a status and sleeps until it is ready (check-status, check-status#1, ...).
function poll(input: Value): Result {
  const until = input.getInt("until") > 1 ? input.getInt("until") : 1;
  const intervalMs = input.getInt("intervalMs") > 0 ? input.getInt("intervalMs") : 1000;
  let check: i64 = 1;
  for (; ; check++) {
    const s = step("check-status");
    if (s.mustRun()) s.ok(check >= until ? "true" : "false");
    if (s.failed()) return Result.failedStep(s);
    if (s.output!.b) break;
    const slept = sleep("backoff", intervalMs);
    if (slept != null) return Result.err(slept); // cancelled
  }
  return Result.ok(new Obj().int("checks", check).toString());
}

// orderSaga reserves stock, holds it for holdMs, charges the card and ships; when the charge
// fails for good, or the run is cancelled before it (abi/ABI.md §4.15), it
// releases the reservation (the compensation) and fails with the payment's error.
function orderSaga(input: Value): Result {
  const orderID = input.getString("orderId");
  const amount = input.getInt("amount");

  const reserve = step("reserve-inventory");
  if (reserve.mustRun()) reserve.ok(quote("res-" + orderID));
  if (reserve.failed()) return Result.failedStep(reserve);
  const reservation = reserve.output!.s;
  const holdMs = input.getInt("holdMs"); // hold the reservation this long before the charge
  if (holdMs > 0) {
    const held = sleep("hold", holdMs);
    if (held != null) return compensate(reservation, Result.err(held));
  }

  const pay = step("charge-payment", new Retry(3, "fixed", 10));
  if (pay.mustRun()) {
    if (input.getBool("failPayment")) {
      pay.err("card_declined", "card declined for " + amount.toString() + " (attempt " + pay.attempt.toString() + ")");
    } else {
      pay.ok(quote("ch-" + orderID + "-" + amount.toString()));
    }
  }
  if (pay.failed()) return compensate(reservation, Result.failedStep(pay));
  const ship = step("ship-order");
  if (ship.mustRun()) ship.ok(quote("tracking-" + orderID));
  if (ship.failed()) return Result.failedStep(ship);
  return Result.ok(new Obj().str("orderId", orderID).bool("shipped", true).bool("compensated", false).toString());
}

// steps runs N trivial steps (keys s, s#1, ...); each body logs "step ran index=N".
function steps(input: Value): Result {
  const n = input.getInt("n");
  const sleepMs = input.getInt("sleepMs");
  let sum: i64 = 0;
  for (let i: i64 = 0; i < n; i++) {
    const s = step("s");
    if (s.mustRun()) {
      log("step ran index=" + i.toString() + " attempt=" + s.attempt.toString());
      s.ok(i.toString());
    }
    if (s.failed()) return Result.failedStep(s);
    sum += <i64>s.output!.n;
    if (sleepMs > 0 && i < n - 1) {
      const slept = sleep("pause", sleepMs);
      if (slept != null) return Result.err(slept); // cancelled
    }
  }
  return Result.ok(new Obj().int("sum", sum).toString());
}

// timeouts runs one step whose first hangAttempts attempts never return: the host stops each
// at its timeout and retries the step (abi/ABI.md §4.4). With every attempt hung, the
// workflow sees the step's failure and completes saying so.
function timeouts(input: Value): Result {
  const hangAttempts = input.getInt("hangAttempts");
  const attempts = input.getInt("attempts");
  const s = step("slow-call", new Retry(attempts != 0 ? <i32>attempts : 3, "fixed", 1), input.getInt("timeoutMs"));
  if (s.mustRun()) {
    if (<i64>s.attempt <= hangAttempts) spin();
    s.ok(s.attempt.toString());
  }
  if (s.failed()) return Result.ok(new Obj().str("failed", s.error!.code).toString());
  return Result.ok(new Obj().int("attempt", <i64>s.output!.n).toString());
}

// spin never returns: a callback stuck in a loop, which only the host can stop.
function spin(): void {
  let spins: i64 = 0;
  while (spins >= 0) spins++;
}

// relay sends one event, to a run or to the whole tenant, from a step (abi/ABI.md §4.13): the
// send lands once however often the step runs, and its outcome is the run's output. A refused
// event (no such run, the run ended) fails the run with the code event_refused.
function relay(input: Value): Result {
  const p = input.get("payload");
  const payload = p != null ? stringifyValue(p) : "null";
  const req = new Obj().str("event", input.getString("event")).raw("payload", payload);
  if (input.getBool("broadcast")) req.bool("broadcast", true);
  else req.str("runId", input.getString("runId"));
  // The Go module declares one attempt for the workflow's steps; this one has one step.
  const s = step("notify", new Retry(1, "", 0));
  if (s.mustRun()) {
    const sent = sendEvent(req.toString());
    if (sent.error != null) s.err(sent.error!.code, sent.error!.message);
    else s.ok(sent.json);
  }
  if (s.failed()) return Result.failedStep(s);
  return Result.ok(stringifyValue(s.output!));
}

// ticker is a loop that continues as new after every turn (abi/ABI.md §4.14): each run
// journals only its own turn's ticks, so the loop can run past any step cap.
function ticker(input: Value): Result {
  const turn = input.getInt("turn");
  const turns = max<i64>(input.getInt("turns"), 1);
  const ticks = max<i64>(input.getInt("ticks"), 1);
  let total = input.getInt("total");
  for (let i: i64 = 1; i <= ticks; i++) {
    const s = step("tick");
    if (s.mustRun()) s.ok((turn * ticks + i).toString());
    if (s.failed()) return Result.failedStep(s);
    total += <i64>s.output!.n;
  }
  if (turn + 1 >= turns) return Result.ok(new Obj().int("turns", turn + 1).int("total", total).toString());
  return continueAsNew(new Obj().int("turn", turn + 1).int("turns", turns).int("ticks", ticks).int("total", total).toString());
}

// compensate releases the reservation, then fails with cause.
function compensate(reservation: string, cause: Result): Result {
  const release = step("release-inventory");
  if (release.mustRun()) {
    log("released " + reservation);
    release.ok("true");
  }
  if (release.failed()) return Result.failedStep(release);
  return cause;
}

// child squares n, after holding for holdMs; with fail it fails for good after the square
// (abi/ABI.md §4.16).
function child(input: Value): Result {
  const n = input.getInt("n");
  const sq = step("square");
  if (sq.mustRun()) sq.ok((n * n).toString());
  if (sq.failed()) return Result.failedStep(sq);
  const holdMs = input.getInt("holdMs"); // wait this long before answering (a child to cancel)
  if (holdMs > 0) {
    const held = sleep("hold", holdMs);
    if (held != null) return Result.err(held); // cancelled
  }
  if (input.getBool("fail")) {
    const boom = step("explode");
    if (boom.mustRun()) boom.errFinal("child_boom", "the child failed on " + n.toString());
    if (boom.failed()) return Result.failedStep(boom);
  }
  return Result.ok(new Obj().int("square", <i64>sq.output!.n).toString());
}

// parent starts the audit child (detached, with an id of its own) when asked, awaits the
// square child, and compensates when that child fails or this run is cancelled meanwhile.
function parent(input: Value): Result {
  const audit = input.getBool("audit"); // also start a detached audit child
  if (audit) {
    const one = new Obj().int("n", 1).bool("fail", false).int("holdMs", 0).toString();
    const started = runChild("audit", "child", one, "audit-of-square", true);
    if (started.failed()) return Result.failedStep(started);
  }
  const req = new Obj().int("n", input.getInt("n")).bool("fail", input.getBool("failChild")).int("holdMs", input.getInt("holdMs")).toString();
  const res = runChild("square", "child", req);
  if (res.failed()) {
    const comp = step("compensate");
    if (comp.mustRun()) comp.ok("true");
    if (comp.failed()) return Result.failedStep(comp);
    return Result.failedStep(res);
  }
  return Result.ok(new Obj().int("square", res.output!.getInt("square")).bool("audited", audit).toString());
}


// parallelWorkflow fans out n branches joined as the input says (abi/ABI.md §4.18): branch i
// squares i in its step "square", or fails for good there when i is in fail; the caller sums
// the squares of the branches that completed.
function parallelWorkflow(input: Value): Result {
  const n = input.getInt("n");
  const join = input.getString("join");
  parallelFail = [];
  const fail = input.get("fail");
  if (fail != null && fail.kind == ARRAY) {
    for (let k = 0; k < fail.items.length; k++) {
      if (fail.items[k].kind == NUMBER) parallelFail.push(<i64>fail.items[k].n);
    }
  }
  // Saturated, not wrapped: a count past i32 stays one the host refuses.
  const fan = parallel("fan", <i32>min<i64>(max<i64>(n, i32.MIN_VALUE), i32.MAX_VALUE), join, 0, squareBranch);
  if (fan.failed()) return Result.failedStep(fan);
  const branches = fan.output!.get("branches");
  const firstV = fan.output!.get("first");
  const first: i64 = firstV != null ? <i64>firstV.n : -1;
  const statuses: string[] = [];
  let total: i64 = 0;
  if (branches != null) {
    for (let i = 0; i < branches.items.length; i++) {
      const b = branches.items[i];
      const status = b.getString("status");
      statuses.push(quote(status));
      const out = b.get("output");
      if (status == "completed" && out != null) total += out.getInt("sq");
    }
  }
  const sum = step("sum");
  if (sum.mustRun()) sum.ok(new Obj().int("sum", total).toString());
  if (sum.failed()) return Result.failedStep(sum);
  return Result.ok(new Obj().int("first", first).raw("statuses", "[" + statuses.join(",") + "]").int("sum", sum.output!.getInt("sum")).toString());
}

// squareBranch is branch i: its step "square" answers {"sq": i*i}, or fails for good when i is
// one of the failing branches; the branch ends with the step's output or its error.
function squareBranch(i: i32): Result {
  const sq = step("square");
  if (sq.mustRun()) {
    if (parallelFail.includes(<i64>i)) sq.errFinal("branch_boom", "branch " + i.toString() + " fails");
    else sq.ok(new Obj().int("sq", <i64>i * <i64>i).toString());
  }
  if (sq.failed()) return Result.failedStep(sq);
  return Result.ok(stringifyValue(sq.output!));
}
