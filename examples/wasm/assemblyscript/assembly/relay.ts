import { Context, Fields, Result, StepContext, Value, WorkflowOptions, RetryPolicy, register } from "wfhost-as";

// The relay workflow of examples/wasm/go/relay.go.

const options = new WorkflowOptions();
const once = new RetryPolicy();
once.attempts = 1;
options.retry = once;
register("relay", "1", relay, options);

class Send {
  constructor(
    public runId: string,
    public broadcast: bool,
    public event: string,
    public payload: Value,
  ) {}
}

/**
 * relay sends one event, to a run or to the whole tenant, from a step (abi/ABI.md §4.13): the
 * send lands once however often the step runs, and its outcome is the run's output. A refused
 * event (no such run, the run ended) fails the run with the code event_refused.
 */
function relay(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const runId = f.string("runId");
  const broadcast = f.bool("broadcast");
  const event = f.string("event");
  if (f.error != null) return Result.err(f.error!);
  const p = input.get("payload");
  const payload = p != null ? p : Value.null();
  return ctx.step("notify", new Send(runId, broadcast, event, payload), (sc: StepContext, s: Send): Result => {
    const r = s.broadcast ? sc.broadcast(s.event, s.payload) : sc.signal(s.runId, s.event, s.payload);
    if (!r.ok) return Result.err(r.error!);
    return Result.ok(r.value);
  });
}
