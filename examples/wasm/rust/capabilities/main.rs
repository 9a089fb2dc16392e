//! The Rust guest's use of the host's capabilities (abi/ABI.md §4.11, §4.12), the counterpart of
//! examples/wasm/go/capabilities: `http-fetch` makes one request from a step, `secret-leak`
//! tries to leak a secret so that the host's redaction can be checked, and `panic` panics (in a
//! step or not) so that the message can be found in the run's error. `check-declaration`
//! returns the SDK's verdict (`Workflow::check`) on a declaration given as input, so that
//! host/describe_flow_test.go can hold it against the host's on the same declaration.
//! host/rust_capabilities_test.go runs them against the real host functions.

use std::time::Duration;

use wfhost::{
    object, Context, Error, Flow, FromJson, Hook, HttpRequest, RetryPolicy, RunEnd, ToJson, Value,
    Workflow,
};

struct FetchInput {
    url: String,
    method: String,
    body: String,
    secret: String, // a secret's name: sent as a bearer token
}

impl FromJson for FetchInput {
    fn from_json(v: &Value) -> Result<FetchInput, Error> {
        Ok(FetchInput {
            url: v.field("url")?,
            method: v.field("method")?,
            body: v.field("body")?,
            secret: v.field("secret")?,
        })
    }
}

struct Fetched {
    status: u16,
    body: String,
}

impl ToJson for Fetched {
    fn to_json(&self) -> Value {
        object! { "status" => self.status, "body" => self.body }
    }
}

impl FromJson for Fetched {
    fn from_json(v: &Value) -> Result<Fetched, Error> {
        Ok(Fetched {
            status: v.field("status")?,
            body: v.field("body")?,
        })
    }
}

/// http_fetch returns the status and body of one request, or fails with the host's error (its
/// code, and a message that names the step).
fn http_fetch(ctx: &Context, input: FetchInput) -> Result<Fetched, Error> {
    let fetched = ctx.step("fetch", |sc| {
        let method = if input.method.is_empty() {
            "GET"
        } else {
            &input.method
        };
        let mut req = HttpRequest::new(method, &input.url).body(input.body.as_bytes());
        if !input.secret.is_empty() {
            let token = sc.secret(&input.secret)?;
            req = req.header("Authorization", &format!("Bearer {}", token));
        }
        let resp = sc.http(&req)?;
        Ok(Fetched {
            status: resp.status,
            body: resp.text(),
        })
    })?;
    Ok(fetched)
}

/// secret_leak logs a secret, returns it from its step and fails the run with it: the host must
/// redact it everywhere.
fn secret_leak(ctx: &Context, input: Value) -> Result<(), Error> {
    let name: String = input.field("name")?;
    let leaked: String = ctx.step("leak", |sc| {
        let v = sc.secret(&name)?;
        ctx.info(&format!("the secret is {}", v));
        Ok(format!("value={}", v))
    })?;
    Err(Error::new(
        "leak",
        format!("failing with {}", leaked.trim_start_matches("value=")),
    ))
}

/// panic panics, inside its step's callback if the input says `{"inStep": true}`.
fn panic(ctx: &Context, input: Value) -> Result<(), Error> {
    if input.field("inStep")? {
        ctx.step("explode", |sc| -> Result<(), Error> {
            panic!("boom on attempt {}", sc.attempt())
        })?;
    }
    panic!("boom outside a step")
}

wfhost::workflows![
    Workflow::new("http-fetch", "1", http_fetch).retry(RetryPolicy::new().attempts(1)),
    Workflow::new("secret-leak", "1", secret_leak),
    Workflow::new("panic", "1", panic),
    Workflow::new("check-declaration", "1", check_declaration),
];

/// check_declaration builds the workflow declaration its input describes, as a description's
/// workflow entry ({"name", "version", "flow", "onEnd"}), and returns {"fault"}: what
/// Workflow::check says of it, "" for nothing. A status that is not a RunEnd cannot be declared
/// in Rust, nor can a negative limit or period; the input has none.
fn check_declaration(_: &Context, v: Value) -> Result<Value, Error> {
    fn body(_: &Context, _: Value) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    let name: String = v.field("name")?;
    let version: String = v.field("version")?;
    let mut w = Workflow::new(&name, &version, body);
    let ms = |p: &Value| -> Result<Duration, Error> {
        Ok(Duration::from_millis(p.field::<i64>("periodMs")? as u64))
    };
    if let Some(f) = v.get("flow") {
        let mut flow = Flow::new().priority(f.field::<i64>("priority")? as i32);
        if let Some(c) = f.get("concurrency") {
            flow = flow.concurrency(&c.field::<String>("key")?, c.field::<i64>("limit")? as u32);
        }
        if let Some(r) = f.get("rate") {
            flow = flow.rate(&r.field::<String>("key")?, r.field::<i64>("limit")? as u32, ms(r)?);
        }
        if let Some(d) = f.get("debounce") {
            flow = flow.debounce(&d.field::<String>("key")?, ms(d)?);
        }
        w = w.flow(flow);
    }
    for h in v.get("onEnd").and_then(Value::as_array).into_iter().flatten() {
        let mut when = Vec::new();
        for s in h.get("when").and_then(Value::as_array).into_iter().flatten() {
            when.push(match s.as_str() {
                Some("completed") => RunEnd::Completed,
                Some("failed") => RunEnd::Failed,
                Some("cancelled") => RunEnd::Cancelled,
                _ => return Err(Error::new("bad_input", "a status that is not a RunEnd")),
            });
        }
        w = w.on_end(match h.get("start") {
            Some(s) => Hook::start(&when, &s.field::<String>("workflow")?)
                .version(&s.field::<String>("version")?),
            None => Hook::webhook(&when, &h.field::<String>("webhook")?),
        });
    }
    Ok(object! { "fault" => w.check().err().unwrap_or_default() })
}
