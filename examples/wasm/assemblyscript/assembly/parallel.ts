import { BranchStatus, Context, Failure, Fields, Join, Kind, ParallelResult, Result, StepContext, Value, register } from "wfhost-as";

// The parallel workflow of examples/wasm/go (abi/ABI.md §4.18): a fan-out of n branches joined
// as the input says. Branch i squares i in its step "square", or fails for good there when i is
// in fail; the caller sums the squares of the branches that completed.

register("parallel", "1", parallel);

function parallel(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const n = f.int("n");
  let join = f.string("join"); // "all" (or empty), "first" or "allSettled"
  const failing = f.any("fail"); // the branches whose step fails
  if (f.error != null) return Result.err(f.error!);
  if (join.length == 0) join = Join.All;
  if (join != Join.All && join != Join.First && join != Join.AllSettled) {
    return Result.err(new Failure("invalid_input", "join " + join + " is not all, first or allSettled").final());
  }
  const fail = failing != null && failing.kind == Kind.Array ? failing : Value.array();
  // Saturated, not wrapped: a count past i32 stays one the host refuses.
  const branches = <i32>min<i64>(max<i64>(n, i32.MIN_VALUE), i32.MAX_VALUE);
  const res = ctx.parallel("fan", branches, join, 0, fail, branch);
  if (!res.ok) return res;
  const pr = ParallelResult.of(res.value);
  const statuses = Value.array();
  for (let i = 0; i < pr.branches.length; i++) statuses.push(Value.string(pr.branches[i].status));
  const sum = ctx.step("sum", res.value, (sc: StepContext, r: Value): Result => {
    const pr = ParallelResult.of(r);
    let sum: i64 = 0;
    for (let i = 0; i < pr.branches.length; i++) {
      const b = pr.branches[i];
      if (b.status != BranchStatus.Completed) continue;
      const sq = b.output.get("sq");
      if (sq != null) sum += sq.asInt();
    }
    return Result.ok(Value.object().setInt("sum", sum));
  });
  if (!sum.ok) return sum;
  const total = sum.value.get("sum");
  return Result.ok(
    Value.object()
      .setInt("first", pr.first)
      .set("statuses", statuses)
      .setInt("sum", total != null ? total.asInt() : 0),
  );
}

/** branch i squares i in its step "square", which fails for good when i is in fail. */
function branch(ctx: Context, i: i32, fail: Value): Result {
  let failing = false;
  for (let k = 0; k < fail.length; k++) {
    if (fail.at(k)!.asInt() == <i64>i) failing = true;
  }
  const arg = Value.object().setInt("i", i).setBool("fail", failing);
  return ctx.step("square", arg, (sc: StepContext, a: Value): Result => {
    const i = a.get("i")!.asInt();
    if (a.get("fail")!.asBool()) {
      return Result.err(new Failure("branch_boom", "branch " + i.toString() + " fails").final());
    }
    return Result.ok(Value.object().setInt("sq", i * i));
  });
}
