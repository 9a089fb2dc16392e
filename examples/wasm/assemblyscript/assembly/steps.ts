import { Context, Fields, Result, StepContext, Value, register } from "wfhost-as";

// The steps workflow of examples/wasm/go/steps.go.

register("steps", "1", steps);

/**
 * steps runs N trivial steps (keys s, s#1, ...), for crash tests and benchmarks. Each callback
 * logs "step ran index=N", so tests can count how often each ran.
 */
function steps(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const n = f.int("n");
  const sleepMs = f.int("sleepMs"); // a durable sleep between steps when > 0
  if (f.error != null) return Result.err(f.error!);
  let sum: i64 = 0;
  for (let i: i64 = 0; i < n; i++) {
    const v = ctx.step("s", i, (sc: StepContext, i: i64): Result => {
      sc.log("step ran index=" + i.toString() + " attempt=" + sc.attempt.toString());
      return Result.ok(Value.integer(i));
    });
    if (!v.ok) return v;
    sum += v.value.asInt();
    if (sleepMs > 0 && i < n - 1) {
      const slept = ctx.sleep("pause", sleepMs);
      if (!slept.ok) return slept; // cancelled
    }
  }
  return Result.ok(Value.object().setInt("sum", sum));
}
