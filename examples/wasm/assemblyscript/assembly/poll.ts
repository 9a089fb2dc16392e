import { Context, Fields, Result, StepContext, Value, register } from "wfhost-as";

// The poll workflow of examples/wasm/go/poll.go.

register("poll", "1", poll);

class Check {
  constructor(
    public check: i64,
    public until: i64,
  ) {}
}

/**
 * poll checks a status and sleeps until it is ready: each repetition of a step name gets its
 * own journal key (check-status, check-status#1, ...).
 */
function poll(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const until = max<i64>(f.int("until"), 1); // the status is ready on this check
  const intervalMs = f.int("intervalMs"); // pause between checks; default 1s
  if (f.error != null) return Result.err(f.error!);
  for (let check: i64 = 1; ; check++) {
    const ready = ctx.step("check-status", new Check(check, until), (sc: StepContext, c: Check): Result => {
      return Result.ok(Value.bool(c.check >= c.until));
    });
    if (!ready.ok) return ready;
    if (ready.value.asBool()) return Result.ok(Value.object().setInt("checks", check));
    const slept = ctx.sleep("backoff", intervalMs > 0 ? intervalMs : 1000);
    if (!slept.ok) return slept; // cancelled
  }
  return unreachable();
}
