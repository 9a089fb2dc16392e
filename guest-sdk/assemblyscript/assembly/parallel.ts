// Parallel steps (abi/ABI.md §4.18): the wire shapes of Context.parallel, kept apart from the
// Context so that they read without the host: the Parallel request, the BRANCH reply and the
// ParallelResult.

import { Failure } from "./errors";
import { Kind, stringify, Value } from "./json";

/** Join names when a parallel step is decided. */
export namespace Join {
  /** All succeeds when every branch completed; the first branch to fail fails it (branch_failed). */
  export const All = "all";
  /** First succeeds at the first branch to complete; it fails (branch_failed) when every branch failed. */
  export const First = "first";
  /** AllSettled succeeds when every branch ended, however each ended. */
  export const AllSettled = "allSettled";
}

/** BranchStatus names how a branch ended, as a ParallelResult reports it. */
export namespace BranchStatus {
  export const Completed = "completed";
  /** Failed is a branch that failed, or was cancelled other than by the join. */
  export const Failed = "failed";
  /** Cancelled is a branch the join cancelled, or never started. */
  export const Cancelled = "cancelled";
}

/** parallelRequest is the ABI's Parallel JSON. */
export function parallelRequest(n: i32, join: string, maxConcurrent: i32): string {
  return stringify(
    Value.object()
      .setInt("branches", n)
      .setString("join", join.length == 0 ? Join.All : join)
      .setInt("maxConcurrent", maxConcurrent),
  );
}

/**
 * branchIndex reads the index a BRANCH reply carries; -1 when it names none of the n branches
 * (a host that breaks the ABI: the SDK fails the branch rather than run the wrong one).
 */
export function branchIndex(data: Value, n: i32): i32 {
  const b = data.get("branch");
  if (b == null || b.kind != Kind.Number) return -1;
  const f = b.asNumber();
  if (f != Math.floor(f) || f < 0 || f >= <f64>n) return -1;
  return <i32>f;
}

/** BranchResult is one branch's end in a ParallelResult. */
export class BranchResult {
  constructor(
    /** status is BranchStatus.Completed, Failed or Cancelled. */
    public status: string,
    /** output is a completed branch's output (JSON null otherwise). */
    public output: Value,
    /** error is a failed branch's error. */
    public error: Failure | null,
  ) {}

  get completed(): bool {
    return this.status == BranchStatus.Completed;
  }
}

/**
 * ParallelResult is what Context.parallel returns (as its Result's value, the JSON) once its
 * join is decided: every branch's end in branch order, and the index of the first branch to
 * complete (-1 when none did). ParallelResult.of reads it from that JSON.
 */
export class ParallelResult {
  constructor(
    public branches: BranchResult[],
    public first: i32,
  ) {}

  /**
   * of reads a ParallelResult JSON. Anything it does not recognise (a missing list, an unknown
   * status) reads as no branches, or as a failed branch, never as a completed one.
   */
  static of(v: Value): ParallelResult {
    const list = v.get("branches");
    const branches = new Array<BranchResult>();
    if (list != null && list.kind == Kind.Array) {
      for (let i = 0; i < list.length; i++) {
        const b = list.at(i)!;
        const s = b.get("status");
        let status = s != null && s.kind == Kind.String ? s.asString() : "";
        if (status != BranchStatus.Completed && status != BranchStatus.Cancelled) status = BranchStatus.Failed;
        let output = Value.null();
        const o = b.get("output");
        if (status == BranchStatus.Completed && o != null) output = o;
        let error: Failure | null = null;
        const e = b.get("error");
        if (e != null && !e.isNull) error = Failure.fromInfo(e, stringify(e));
        branches.push(new BranchResult(status, output, error));
      }
    }
    let first: i32 = -1;
    const f = v.get("first");
    if (f != null && f.kind == Kind.Number) {
      const n = f.asNumber();
      if (n == Math.floor(n) && n >= 0 && n < <f64>branches.length) first = <i32>n;
    }
    return new ParallelResult(branches, first);
  }
}
