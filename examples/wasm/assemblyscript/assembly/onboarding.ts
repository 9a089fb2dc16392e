import { Backoff, Context, Fields, Result, RetryPolicy, StepContext, Value, WaitOptions, register } from "wfhost-as";
import { hex, sha256 } from "./sha256";

// The onboarding workflow of examples/wasm/go/onboarding.go: the same steps, names, inputs,
// outputs and errors, so that both give the same transcripts (engine/conformance_test.go).

/** welcomeStep is the welcome mail's step name. */
const welcomeStep = "send-welcome";

register("onboarding", "1", onboarding, {
  retentionDays: 30,
  // A broadcast of user.signed_up starts a run with the event's payload as its input.
  triggers: ["user.signed_up"],
});

/** Welcome is what the welcome mail's callback needs: callbacks cannot capture locals. */
class Welcome {
  constructor(
    public email: string,
    public failWelcome: i64,
  ) {}
}

function onboarding(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const email = f.string("email");
  const delayMs = f.int("delayMs"); // pause before the welcome mail; default 1s
  const failWelcome = f.int("failWelcome"); // the welcome mail fails on this many first attempts
  const verifyTimeoutMs = f.int("verifyTimeoutMs"); // how long to wait for verification; default 24h
  if (f.error != null) return Result.err(f.error!);

  // The query "status" reads this state as it is where the run stands (abi/ABI.md §4.17).
  const state = Value.object().setString("stage", "creating-user").setString("userId", "");
  ctx.onQuery("status", state, status);

  const u = ctx.step("create-user", email, (sc: StepContext, email: string): Result => {
    const sum = sha256(Uint8Array.wrap(String.UTF8.encode(email.toLowerCase())));
    return Result.ok(Value.object().setString("id", "u-" + hex(sum.subarray(0, 6))).setString("email", email));
  });
  if (!u.ok) return u;
  const userId = u.value.get("id")!.asString();
  const userEmail = u.value.get("email")!.asString();
  state.setString("stage", "welcome-delay").setString("userId", userId);

  const slept = ctx.sleep("welcome-delay", delayMs > 0 ? delayMs : 1000);
  if (!slept.ok) return slept; // cancelled

  state.setString("stage", "welcoming");
  const welcome = ctx.step(
    welcomeStep,
    new Welcome(userEmail, failWelcome),
    (sc: StepContext, w: Welcome): Result => {
      if (<i64>sc.attempt <= w.failWelcome) {
        return Result.fail("smtp_unavailable", "mail server refused attempt " + sc.attempt.toString());
      }
      sc.log("welcome mail sent to " + w.email + " on attempt " + sc.attempt.toString());
      return Result.ok(Value.string("sent"));
    },
    { retry: { attempts: 5, backoff: Backoff.Fixed, baseMs: 20 } },
  );
  if (!welcome.ok) return welcome;

  state.setString("stage", "awaiting-verify");
  const wait = ctx.waitForEvent("await-verify", "verify", {
    match: Value.object().setString("userId", userId),
    timeoutMs: verifyTimeoutMs > 0 ? verifyTimeoutMs : 24 * 3600 * 1000,
  });
  if (wait.error != null) return Result.err(wait.error!);
  if (!wait.timedOut) {
    const via = new Fields(wait.payload, "event payload").string("via");
    return Result.ok(outcome(userId, true, false, "verified via " + via));
  }
  state.setString("stage", "nudging");
  const nudge = ctx.step("send-nudge", userEmail, (sc: StepContext, email: string): Result => {
    sc.log("nudging " + email + " to verify");
    return Result.ok(Value.bool(true));
  });
  if (!nudge.ok) return nudge;
  return Result.ok(outcome(userId, false, true, "nudged"));
}

/** status answers the query "status": the run's stage and user, and the query's argument echoed. */
function status(state: Value, arg: Value): Result {
  return Result.ok(
    Value.object().setString("stage", state.get("stage")!.asString()).setString("userId", state.get("userId")!.asString()).set("arg", arg),
  );
}

function outcome(userId: string, verified: bool, nudged: bool, outcome: string): Value {
  return Value.object().setString("userId", userId).setBool("verified", verified).setBool("nudged", nudged).setString("outcome", outcome);
}
