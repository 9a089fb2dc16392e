import { ChildOptions, Context, Failure, Fields, Result, StepContext, Value, register } from "wfhost-as";

// The parent and child workflows of examples/wasm/go/workflows_children.go (abi/ABI.md §4.16).

register("child", "1", child);
register("parent", "1", parent);

/** child squares n, after holding for holdMs; with fail it fails for good after the square. */
function child(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const n = f.int("n");
  const fail = f.bool("fail");
  const holdMs = f.int("holdMs"); // wait this long before answering (a child to cancel)
  if (f.error != null) return Result.err(f.error!);
  const sq = ctx.step("square", n, (sc: StepContext, n: i64): Result => Result.ok(Value.integer(n * n)));
  if (!sq.ok) return sq;
  if (holdMs > 0) {
    const held = ctx.sleep("hold", holdMs);
    if (!held.ok) return held;
  }
  if (fail) {
    const boom = ctx.step("explode", n, (sc: StepContext, n: i64): Result => {
      return Result.err(new Failure("child_boom", "the child failed on " + n.toString()).final());
    });
    if (!boom.ok) return boom;
  }
  return Result.ok(Value.object().setInt("square", sq.value.asInt()));
}

/**
 * parent starts the audit child (detached, with an id of its own) when asked, awaits the
 * square child, and compensates when that child fails or this run is cancelled meanwhile.
 */
function parent(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const n = f.int("n");
  const failChild = f.bool("failChild");
  const holdMs = f.int("holdMs");
  const audit = f.bool("audit"); // also start a detached audit child
  if (f.error != null) return Result.err(f.error!);
  if (audit) {
    const opts = new ChildOptions();
    opts.id = "audit-of-square";
    const started = ctx.startChild("audit", "child", Value.object().setInt("n", 1).setBool("fail", false).setInt("holdMs", 0), opts);
    if (!started.ok) return started;
  }
  const req = Value.object().setInt("n", n).setBool("fail", failChild).setInt("holdMs", holdMs);
  const res = ctx.runChild("square", "child", req);
  if (!res.ok) {
    const comp = ctx.step("compensate", 0, (sc: StepContext, _: i32): Result => Result.ok(Value.bool(true)));
    if (!comp.ok) return comp;
    return res;
  }
  const sq = res.value.get("square");
  return Result.ok(Value.object().setInt("square", sq != null ? sq.asInt() : 0).setBool("audited", audit));
}
