import { Concurrency, Context, Debounce, Fields, Flow, Hook, Rate, Result, RunEnd, StepContext, Value, WorkflowOptions, register } from "wfhost-as";

// The digest workflow of examples/wasm/go/workflows_with_flow.go: flow control and completion
// hooks declared as the Go module declares them, so the host reads the same description.

const options = new WorkflowOptions();
// Per customer: one digest at a time, at most ten a minute, a burst of starts within five
// seconds makes one run (the last start's input), and digests yield to other work by 30 seconds.
const flow = new Flow();
flow.concurrency = new Concurrency("$.customerId", 1);
flow.rate = new Rate("$.customerId", 10, 60000);
flow.debounce = new Debounce("$.customerId", 5000);
flow.priority = -30;
options.flow = flow;
// A sent digest starts a follow-up run (the steps example stands in for one); a digest that
// failed or was cancelled is posted to the operators' webhook.
options.onEnd = [
  Hook.start([RunEnd.Completed], "steps", "1"),
  Hook.webhook([RunEnd.Failed, RunEnd.Cancelled], "https://ops.example.com/wfhost/digest"),
];
register("digest", "1", digest, options);

/** digest sends a customer's digest in one step; the declarations above are the point of it. */
function digest(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const customerId = f.string("customerId");
  if (f.error != null) return Result.err(f.error!);
  return ctx.step("send-digest", customerId, (sc: StepContext, id: string): Result => {
    return Result.ok(Value.object().setString("customerId", id).setBool("sent", true));
  });
}
