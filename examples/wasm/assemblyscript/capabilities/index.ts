// A second AssemblyScript module, built into testdata/capabilities_as.wasm: the workflows of
// examples/wasm/go/capabilities (outbound HTTP, secrets, a secret that tries to leak) and a few
// that exercise the SDK's edges (JSON round trips, aborts, non-retryable codes, its verdict on
// a workflow's declaration) for the tests in host/as_sdk_test.go and host/describe_flow_test.go. It is its own module so the examples stay the same four as Go's.

import {
  Backoff,
  Concurrency,
  Context,
  Debounce,
  Flow,
  Hook,
  HookStart,
  Rate,
  WorkflowOptions,
  checkWorkflow,
  Failure,
  Fields,
  HttpRequest,
  Result,
  RetryPolicy,
  StepContext,
  StepOptions,
  Value,
  nowMs,
  random,
  register,
} from "wfhost-as";

export * from "wfhost-as/exports";

class Fetch {
  constructor(
    public url: string,
    public method: string,
    public body: string,
    public secret: string,
  ) {}
}

// http-fetch makes one request inside a step and returns the status and body, or the host's
// error (code and message) as the run's: the same inputs and outputs as the Go module's.
register("http-fetch", "1", httpFetch, { retry: { attempts: 1 } });

function httpFetch(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const fetch = new Fetch(f.string("url"), f.string("method", "GET"), f.string("body"), f.string("secret"));
  const outside = f.bool("outside"); // make the request outside any step (the host refuses)
  if (f.error != null) return Result.err(f.error!);
  if (outside) {
    const r = new StepContext("", 0).http(request(fetch));
    return r.ok ? Result.ok(Value.null()) : Result.err(r.error!);
  }
  return ctx.step("fetch", fetch, (sc: StepContext, f: Fetch): Result => {
    const req = request(f);
    if (f.secret.length > 0) {
      const token = sc.secret(f.secret);
      if (!token.ok) return Result.err(token.error!);
      req.header("Authorization", "Bearer " + token.value);
    }
    const r = sc.http(req);
    if (!r.ok) return Result.err(r.error!);
    const resp = r.response!;
    return Result.ok(Value.object().setInt("status", resp.status).setString("body", resp.text()));
  });
}

function request(f: Fetch): HttpRequest {
  const req = new HttpRequest();
  req.method = f.method.length > 0 ? f.method : "GET";
  req.url = f.url;
  if (f.body.length > 0) req.text(f.body);
  return req;
}

// secret-leak tries every way a secret could escape: it logs it, returns it from its step and
// fails the run with it. The host must redact it everywhere.
register("secret-leak", "1", (ctx: Context, input: Value): Result => {
  const name = new Fields(input, "workflow input").string("Name");
  const leaked = ctx.step("leak", name, (sc: StepContext, name: string): Result => {
    const v = sc.secret(name);
    if (!v.ok) return Result.err(v.error!);
    sc.log("the secret is " + v.value);
    return Result.ok(Value.string("value=" + v.value));
  });
  if (!leaked.ok) return leaked;
  return Result.fail("leak", "failing with " + leaked.value.asString().replace("value=", ""));
});

// json-echo returns its input after a round trip through a step's journaled output: what the
// SDK parses and serializes must decode to the same JSON value.
register("json-echo", "1", (ctx: Context, input: Value): Result => {
  return ctx.step("echo", input, (sc: StepContext, v: Value): Result => Result.ok(v));
});

// abort-in-step throws inside a step callback on every attempt: each attempt is a step failure
// with code panic, and once they are spent the pass traps with the reason on stderr.
register("abort-in-step", "1", (ctx: Context, input: Value): Result => {
  const r = ctx.step(
    "explode",
    input,
    (sc: StepContext, v: Value): Result => {
      throw new Error("exploded on attempt " + sc.attempt.toString());
    },
    { retry: { attempts: 2, backoff: Backoff.Fixed, baseMs: 1 } },
  );
  return r;
});

// abort-outside indexes past the end of an array in the workflow body.
register("abort-outside", "1", (ctx: Context, input: Value): Result => {
  const a = new Array<i32>(1);
  return Result.ok(Value.integer(a[<i32>new Fields(input, "input").int("index")]));
});

// non-retryable fails its step with a code the step's policy lists as non-retryable: one
// attempt although five are allowed.
register("non-retryable", "1", (ctx: Context, input: Value): Result => {
  const policy: RetryPolicy = { attempts: 5, backoff: Backoff.Fixed, baseMs: 1, nonRetryable: ["bad_card"] };
  const opts: StepOptions = { retry: policy };
  return ctx.step(
    "charge",
    input,
    (sc: StepContext, v: Value): Result => Result.err(new Failure("bad_card", "attempt " + sc.attempt.toString())),
    opts,
  );
});

// clock reads the clock and the random source in the body and in a step: the body's are the
// journal's time and the run's seeded stream, the same on every replay; the step's are real.
register("clock", "1", (ctx: Context, input: Value): Result => {
  const body = Value.object().setInt("now", nowMs()).setNumber("random", random());
  const inStep = ctx.step("sample", 0, (sc: StepContext, _: i32): Result => {
    return Result.ok(Value.object().setInt("now", nowMs()).setNumber("random", random()));
  });
  if (!inStep.ok) return inStep;
  return Result.ok(Value.object().set("body", body).set("step", inStep.value));
});

// check-declaration builds the workflow declaration its input describes, as a description's
// workflow entry ({"name", "version", "flow", "onEnd"}), and returns {"fault"}: what
// checkWorkflow (register's check) says of it, "" for nothing, so that a test can hold the
// SDK's verdict against the host's on the same declaration.
register("check-declaration", "1", (ctx: Context, input: Value): Result => {
  const f = new Fields(input, "workflow input");
  const name = f.string("name");
  const version = f.string("version");
  const opts = new WorkflowOptions();
  const fv = input.get("flow");
  if (fv != null) {
    const ff = new Fields(fv, "flow");
    const flow = new Flow();
    flow.priority = <i32>ff.int("priority");
    const c = fv.get("concurrency");
    if (c != null) {
      const cf = new Fields(c, "concurrency");
      flow.concurrency = new Concurrency(cf.string("key"), <i32>cf.int("limit"));
    }
    const r = fv.get("rate");
    if (r != null) {
      const rf = new Fields(r, "rate");
      flow.rate = new Rate(rf.string("key"), <i32>rf.int("limit"), rf.int("periodMs"));
    }
    const d = fv.get("debounce");
    if (d != null) {
      const df = new Fields(d, "debounce");
      flow.debounce = new Debounce(df.string("key"), df.int("periodMs"));
    }
    opts.flow = flow;
  }
  const hooks = input.get("onEnd");
  if (hooks != null) {
    for (let i = 0; i < hooks.length; i++) {
      const hv = hooks.at(i)!;
      const h = new Hook();
      const when = hv.get("when");
      if (when != null) for (let k = 0; k < when.length; k++) h.when.push(when.at(k)!.asString());
      const s = hv.get("start");
      if (s != null) {
        const sf = new Fields(s, "start");
        h.start = new HookStart(sf.string("workflow"), sf.string("version"));
      }
      const w = hv.get("webhook");
      if (w != null) h.webhook = w.asString();
      opts.onEnd.push(h);
    }
  }
  if (f.error != null) return Result.err(f.error!);
  return Result.ok(Value.object().setString("fault", checkWorkflow(name, version, opts)));
});
