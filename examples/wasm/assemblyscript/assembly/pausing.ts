import { Backoff, Context, Fields, Result, StepContext, Value, register } from "wfhost-as";

// The charge-or-pause workflow of examples/wasm/go/workflow_pause.go.

register("charge-or-pause", "1", chargeOrPause);

class Charge {
  constructor(public failAttempts: i64) {}
}

/**
 * chargeOrPause charges with two attempts and pauses the run when both fail (onExhausted
 * "pause"), for an operator to fix the cause and resume it: the resume tries the charge once
 * more. Each attempt logs "charge attempt N".
 */
function chargeOrPause(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const c = new Charge(f.int("failAttempts"));
  if (f.error != null) return Result.err(f.error!);
  const charge = ctx.step(
    "charge",
    c,
    (sc: StepContext, c: Charge): Result => {
      sc.log("charge attempt " + sc.attempt.toString());
      if (<i64>sc.attempt <= c.failAttempts) {
        return Result.fail("declined", "card declined on attempt " + sc.attempt.toString());
      }
      return Result.ok(Value.string("ch-1"));
    },
    { retry: { attempts: 2, backoff: Backoff.Fixed, baseMs: 10, onExhausted: "pause" } },
  );
  if (!charge.ok) return charge;
  const shipped = ctx.step("ship", c, (sc: StepContext, c: Charge): Result => {
    return Result.ok(Value.bool(true));
  });
  if (!shipped.ok) return shipped;
  return Result.ok(Value.object().setString("charge", charge.value.asString()).setBool("shipped", true));
}
