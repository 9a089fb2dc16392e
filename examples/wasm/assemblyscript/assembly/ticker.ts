import { Context, Fields, Result, StepContext, Value, register } from "wfhost-as";

// The ticker workflow of examples/wasm/go/ticker.go.

register("ticker", "1", ticker);

class Tick {
  constructor(public n: i64) {}
}

/**
 * ticker is a loop that continues as new after every turn (abi/ABI.md §4.14): each run
 * journals only its own turn's ticks, so the loop can run past any step cap.
 */
function ticker(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const turn = f.int("turn");
  const turns = max<i64>(f.int("turns"), 1);
  const ticks = max<i64>(f.int("ticks"), 1);
  let total = f.int("total");
  if (f.error != null) return Result.err(f.error!);
  for (let i: i64 = 1; i <= ticks; i++) {
    const r = ctx.step("tick", new Tick(turn * ticks + i), (sc: StepContext, t: Tick): Result => {
      return Result.ok(Value.integer(t.n));
    });
    if (!r.ok) return r;
    total += r.value.asInt();
  }
  if (turn + 1 >= turns) {
    return Result.ok(Value.object().setInt("turns", turn + 1).setInt("total", total));
  }
  const next = Value.object().setInt("turn", turn + 1).setInt("turns", turns).setInt("ticks", ticks).setInt("total", total);
  return ctx.continueAsNew(next);
}
