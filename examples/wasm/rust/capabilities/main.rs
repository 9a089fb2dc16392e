//! The Rust guest's use of the host's capabilities (abi/ABI.md §4.11, §4.12), the counterpart of
//! examples/wasm/go/capabilities: `http-fetch` makes one request from a step, `secret-leak`
//! tries to leak a secret so that the host's redaction can be checked, and `panic` panics (in a
//! step or not) so that the message can be found in the run's error.
//! host/rust_capabilities_test.go runs them against the real host functions.

use wfhost::{object, Context, Error, FromJson, HttpRequest, RetryPolicy, ToJson, Value, Workflow};

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
];
