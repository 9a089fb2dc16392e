import { Context, Fields, Result, RetryPolicy, StepContext, StepOptions, Value, register } from "wfhost-as";

// The timeouts workflow of examples/wasm/go/timeouts.go.

register("timeouts", "1", timeouts);

class Hang {
  constructor(public hangAttempts: i64) {}
}

/**
 * timeouts runs one step whose first hangAttempts attempts never return: the host stops each
 * at its timeout and retries the step (abi/ABI.md §4.4). With every attempt hung, the
 * workflow sees the step's failure and completes saying so.
 */
function timeouts(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const hangAttempts = f.int("hangAttempts");
  const timeoutMs = f.int("timeoutMs");
  const attempts = f.int("attempts");
  if (f.error != null) return Result.err(f.error!);
  const opts = new StepOptions();
  opts.timeoutMs = timeoutMs;
  const retry = new RetryPolicy();
  retry.attempts = attempts != 0 ? <i32>attempts : 3;
  retry.backoff = "fixed";
  retry.baseMs = 1;
  opts.retry = retry;
  const r = ctx.step("slow-call", new Hang(hangAttempts), (sc: StepContext, h: Hang): Result => {
    if (<i64>sc.attempt <= h.hangAttempts) spin();
    return Result.ok(Value.integer(sc.attempt));
  }, opts);
  if (!r.ok) return Result.ok(Value.object().setString("failed", r.error!.code));
  return Result.ok(Value.object().setInt("attempt", r.value.asInt()));
}

/** spin never returns: a callback stuck in a loop, which only the host can stop. */
function spin(): void {
  let spins: i64 = 0;
  while (spins >= 0) spins++;
}
