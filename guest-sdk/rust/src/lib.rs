//! The wfhost guest SDK for Rust: write durable workflows as plain Rust functions and build
//! them for `wasm32-unknown-unknown` with nothing but `rustc` (the crate has no dependencies).
//!
//! A workflow is a function `fn(&Context, I) -> Result<O, Error>`. `Context::step` makes a
//! durable step, `Context::sleep` a durable sleep, `Context::wait_for_event` a durable wait,
//! `Context::run_child` a child workflow, `Context::parallel` concurrent branches joined as one step;
//! `workflows!` declares a module's workflows and defines the exports of abi/ABI.md §3.
//!
//! The body runs again from the top after every suspension (sleep, wait, retry backoff),
//! replaying the journal, so outside step callbacks it must be deterministic.

mod capabilities;
mod children;
mod error;
mod flow;
mod host;
pub mod json;
mod parallel;

use std::cell::{Cell, RefCell};
use std::time::Duration;

pub use capabilities::{HttpRequest, HttpResponse};
pub use children::ChildOptions;
pub use error::{Error, StepError};
pub use flow::{Concurrency, Debounce, Flow, Hook, HookTarget, Rate, RunEnd};
pub use json::{FromJson, Map, RawJson, ToJson, Value};
pub use parallel::{Branch, BranchStatus, Join, ParallelOptions, ParallelResult};

/// ABI_VERSION is the version of abi/ABI.md this SDK speaks.
pub const ABI_VERSION: i32 = 1;

/// Backoff says how the delay between attempts grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    Fixed,
    Linear,
    Exp,
}

impl Backoff {
    fn as_str(self) -> &'static str {
        match self {
            Backoff::Fixed => "fixed",
            Backoff::Linear => "linear",
            Backoff::Exp => "exp",
        }
    }
}

/// RetryPolicy says how often and how fast a failed step is tried again. Unset (zero) fields
/// take the workflow's policy, then the host's default (3 attempts, exponential 1 s to 60 s,
/// 20% jitter).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RetryPolicy {
    /// attempts counts every try, the first one included; 1 means never retry.
    pub attempts: u32,
    pub backoff: Option<Backoff>,
    /// base is the first delay; max caps every delay. Both are sent in whole milliseconds.
    pub base: Duration,
    pub max: Duration,
    /// jitter is the fraction (0..1) by which a delay varies at random.
    pub jitter: f64,
    /// on_exhausted is what the step does when its attempts run out: "fail" (the default: the
    /// error is returned to the workflow) or "pause" (the run pauses for an operator to fix the
    /// cause and resume it, which tries the step once more). Empty takes the workflow's.
    pub on_exhausted: String,
}

impl RetryPolicy {
    pub fn new() -> RetryPolicy {
        RetryPolicy::default()
    }
    pub fn attempts(mut self, n: u32) -> RetryPolicy {
        self.attempts = n;
        self
    }
    pub fn backoff(mut self, b: Backoff) -> RetryPolicy {
        self.backoff = Some(b);
        self
    }
    pub fn base(mut self, d: Duration) -> RetryPolicy {
        self.base = d;
        self
    }
    pub fn max(mut self, d: Duration) -> RetryPolicy {
        self.max = d;
        self
    }
    pub fn jitter(mut self, fraction: f64) -> RetryPolicy {
        self.jitter = fraction;
        self
    }
    /// pause_when_exhausted makes the run pause, not fail the step, when its attempts run out.
    pub fn pause_when_exhausted(mut self) -> RetryPolicy {
        self.on_exhausted = "pause".into();
        self
    }
}

/// The ABI's RetryPolicy JSON: zero fields are left out, so they fall through to the next policy.
impl ToJson for RetryPolicy {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        if self.attempts != 0 {
            m.insert("attempts".into(), self.attempts.to_json());
        }
        if let Some(b) = self.backoff {
            m.insert("backoff".into(), b.as_str().to_json());
        }
        if !self.base.is_zero() {
            m.insert("baseMs".into(), millis(self.base).to_json());
        }
        if !self.max.is_zero() {
            m.insert("maxMs".into(), millis(self.max).to_json());
        }
        if self.jitter != 0.0 {
            m.insert("jitter".into(), self.jitter.to_json());
        }
        if !self.on_exhausted.is_empty() {
            m.insert("onExhausted".into(), self.on_exhausted.to_json());
        }
        Value::Object(m)
    }
}

/// StepOptions adjust one step (`Context::step_with_options`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepOptions {
    /// retry is the step's retry policy, over the workflow's field by field.
    pub retry: Option<RetryPolicy>,
    /// timeout bounds each attempt: an attempt whose callback has not returned within it is
    /// stopped by the host where it is, fails with the code "timeout" and is retried by the
    /// step's policy (abi/ABI.md §4.4). Sent in whole milliseconds; zero is no timeout.
    pub timeout: Duration,
}

impl StepOptions {
    pub fn new() -> StepOptions {
        StepOptions::default()
    }
    pub fn retry(mut self, p: RetryPolicy) -> StepOptions {
        self.retry = Some(p);
        self
    }
    pub fn timeout(mut self, d: Duration) -> StepOptions {
        self.timeout = d;
        self
    }
}

/// The ABI's StepOptions JSON; empty options are sent as none.
impl ToJson for StepOptions {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(r) = &self.retry {
            m.insert("retry".into(), r.to_json());
        }
        if millis(self.timeout) > 0 {
            m.insert("timeoutMs".into(), millis(self.timeout).to_json());
        }
        Value::Object(m)
    }
}

/// slept is the end of a sleep the host answered with reply.
fn slept(name: &str, reply: host::Reply) -> Result<(), Error> {
    if reply.status == host::STATUS_CANCELLED {
        return Err(cancelled(&format!("sleep {}", name), &reply.data));
    }
    Ok(())
}

/// cancelled is the error a call (what) answered with the run's cancellation: its code is
/// `cancelled`, so a workflow that returns it ends the run cancelled (abi/ABI.md §4.15).
fn cancelled(what: &str, data: &[u8]) -> Error {
    let info = Error::from_info(data);
    let msg = if info.message.is_empty() {
        "the run was cancelled".to_string()
    } else {
        info.message
    };
    Error::new(CODE_CANCELLED, format!("{}: {}", what, msg)).non_retryable()
}

/// CODE_CANCELLED is the code of a cancellation's error (abi/ABI.md §4.15).
pub const CODE_CANCELLED: &str = "cancelled";

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

type RunFn = Box<dyn Fn(&Context, &[u8]) -> Result<String, Error>>;

/// Workflow declares a workflow: its identity, defaults and body. Pass every workflow of the
/// module to `workflows!`.
pub struct Workflow {
    name: String,
    version: String,
    retention_days: u32,
    retry: Option<RetryPolicy>,
    triggers: Vec<String>,
    flow: Option<Flow>,
    on_end: Vec<Hook>,
    run: RunFn,
}

impl Workflow {
    /// new declares workflow `name` at `version` with body `run`. I and O are its input and
    /// output, carried as JSON; use `Value` or `RawJson` for either to handle the JSON yourself.
    pub fn new<I, O, F>(name: &str, version: &str, run: F) -> Workflow
    where
        I: FromJson,
        O: ToJson,
        F: Fn(&Context, I) -> Result<O, Error> + 'static,
    {
        Workflow {
            name: name.to_string(),
            version: version.to_string(),
            retention_days: 0,
            retry: None,
            triggers: Vec::new(),
            flow: None,
            on_end: Vec::new(),
            run: Box::new(move |ctx, raw| {
                let raw = if raw.is_empty() { &b"null"[..] } else { raw };
                let input = I::from_json_text(raw).map_err(|e| {
                    Error::new(
                        "invalid_input",
                        format!("decode workflow input: {}", e.message),
                    )
                    .non_retryable()
                })?;
                run(ctx, input).map(|out| out.to_json_text())
            }),
        }
    }

    /// retention_days keeps a finished run this long; 0 (the default) takes the operator's.
    pub fn retention_days(mut self, days: u32) -> Workflow {
        self.retention_days = days;
        self
    }

    /// retry sets the default policy of the workflow's steps.
    pub fn retry(mut self, policy: RetryPolicy) -> Workflow {
        self.retry = Some(policy);
        self
    }

    /// trigger makes a broadcast of `event` start a run, with the event's payload as input.
    pub fn trigger(mut self, event: &str) -> Workflow {
        self.triggers.push(event.to_string());
        self
    }

    /// flow sets the workflow's flow control: concurrency, rate and debounce per key, and the
    /// default priority of its runs (abi/ABI.md §7).
    pub fn flow(mut self, flow: Flow) -> Workflow {
        self.flow = Some(flow);
        self
    }

    /// on_end adds a completion hook (at most 16): a workflow to start, or a webhook to call,
    /// when one of the workflow's runs ends with a status the hook names.
    pub fn on_end(mut self, hook: Hook) -> Workflow {
        self.on_end.push(hook);
        self
    }

    /// check applies the host's rules for a description (abi/ABI.md §7) to this workflow: its
    /// name and version, its triggers' names, its flow and its hooks. The host refuses an
    /// upload that breaks them; a native `#[test]` that calls check finds out first, and
    /// `wfhost_describe` traps with the reason. (A retry policy's bounds are the host's alone.)
    pub fn check(&self) -> Result<(), String> {
        flow::check_name("workflow", &self.name)?;
        let within = |e: String| format!("workflow {:?}: {}", self.name, e);
        if self.version.is_empty() {
            return Err(within("version is empty".to_string()));
        }
        flow::check_text("version", &self.version, 200).map_err(within)?;
        for t in &self.triggers {
            flow::check_name("trigger event", t).map_err(within)?;
        }
        if let Some(f) = &self.flow {
            f.check().map_err(within)?;
        }
        flow::check_hooks(&self.on_end).map_err(within)
    }

    fn decl(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), self.name.to_json());
        m.insert("version".into(), self.version.to_json());
        if self.retention_days != 0 {
            m.insert("retentionDays".into(), self.retention_days.to_json());
        }
        if let Some(r) = &self.retry {
            m.insert("retry".into(), r.to_json());
        }
        if !self.triggers.is_empty() {
            m.insert("triggers".into(), self.triggers.to_json());
        }
        if let Some(f) = &self.flow {
            m.insert("flow".into(), f.to_json());
        }
        if !self.on_end.is_empty() {
            m.insert("onEnd".into(), self.on_end.to_json());
        }
        Value::Object(m)
    }
}

/// Level is a log record's severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug = -1,
    Info = 0,
    Warn = 1,
    Error = 2,
}

/// Context is the handle a workflow body passes to every durable call. Its methods take
/// `&self`, so a step callback may capture it to log.
pub struct Context {
    workflow: String,
    queries: RefCell<Vec<(String, QueryHandler)>>,
}

/// QueryHandler answers a query from the query's argument (`Value::Null` when none).
type QueryHandler = Box<dyn Fn(&Value) -> Result<Value, Error>>;

/// CODE_UNKNOWN_QUERY answers a query no handler was registered for (abi/ABI.md §4.17).
pub const CODE_UNKNOWN_QUERY: &str = "unknown_query";

/// Waited is how a wait ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Waited<T> {
    /// Event carries the payload of the event that resolved the wait.
    Event(T),
    TimedOut,
}

/// Wait describes what `Context::wait_for_event` waits for.
#[derive(Clone, Debug, PartialEq)]
pub struct Wait {
    event: String,
    matching: Option<Value>,
    timeout: Option<Duration>,
}

impl Wait {
    /// event waits for an event named `name`.
    pub fn event(name: &str) -> Wait {
        Wait {
            event: name.to_string(),
            matching: None,
            timeout: None,
        }
    }

    /// matching resolves the wait only with an event whose payload is a JSON superset of
    /// `pattern`, which must be an object.
    pub fn matching(mut self, pattern: Value) -> Wait {
        self.matching = Some(pattern);
        self
    }

    /// timeout gives up after `d` (at least 1 ms); the wait then returns `Waited::TimedOut`.
    pub fn timeout(mut self, d: Duration) -> Wait {
        self.timeout = Some(d);
        self
    }
}

/// StepContext is what a step callback receives. Only a callback may make outbound requests
/// and read secrets (see `http` and `secret`): outside one they would run again on every replay.
pub struct StepContext {
    attempt: u32,
}

impl StepContext {
    /// attempt is 1 on the first try of the step and counts up with each retry.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }
}

thread_local! {
    // IN_STEP is set while a step callback runs, so that a panic there can end the attempt.
    static IN_STEP: Cell<bool> = Cell::new(false);
}

impl Context {
    /// workflow is the name of the running workflow.
    pub fn workflow(&self) -> &str {
        &self.workflow
    }

    /// on_query registers `f` as the answer to the query `name` (abi/ABI.md §4.17): a client
    /// reads a running run's state with it (`POST .../runs/{id}/query/{name}`, `wfhost runs
    /// query`). The host replays the run's journal and, at the first durable call the journal
    /// does not answer, calls the handler last registered under `name` with the query's
    /// argument. `f` sees what it captured as it is at that call, and must make no durable
    /// call: nothing it does is committed. Registering `name` again replaces its handler, so a
    /// workflow can register the state of each stage as it reaches it.
    pub fn on_query<F>(&self, name: &str, f: F)
    where
        F: Fn(&Value) -> Result<Value, Error> + 'static,
    {
        let mut qs = self.queries.borrow_mut();
        qs.retain(|(n, _)| n != name);
        qs.push((name.to_string(), Box::new(f)));
    }

    /// queried answers the query a durable call's reply carries, if it carries one, and so
    /// never returns then; otherwise it hands the reply back.
    fn queried(&self, reply: host::Reply) -> host::Reply {
        if reply.status != host::STATUS_QUERY {
            return reply;
        }
        let q = Value::parse_bytes(&reply.data).unwrap_or(Value::Null);
        let name = q["name"].as_str().unwrap_or("").to_string();
        let arg = q.get("arg").cloned().unwrap_or(Value::Null);
        let answer = match self.queries.borrow().iter().find(|(n, _)| *n == name) {
            Some((_, h)) => h(&arg),
            None => Err(Error::new(
                CODE_UNKNOWN_QUERY,
                format!("workflow {} has no query \"{}\"", self.workflow, name),
            )),
        };
        match answer {
            Ok(v) => host::query_respond(host::OUTCOME_OK, v.to_json_string().as_bytes()),
            Err(e) => {
                host::query_respond(host::OUTCOME_ERROR, e.to_info().to_json_string().as_bytes())
            }
        }
    }

    /// step runs `f` as the durable step `name` under the workflow's retry policy: its result is
    /// journaled and on replay returned without running `f` again. An error from `f` is retried;
    /// once the attempts are spent, or for a non-retryable error, step returns the StepError.
    ///
    /// `f` may run more than once (at least once, never concurrently): make its side effects
    /// idempotent. The workflow sees the result decoded from the JSON the host committed, on
    /// the first pass as on replay.
    pub fn step<T, F>(&self, name: &str, f: F) -> Result<T, StepError>
    where
        T: ToJson + FromJson,
        F: FnOnce(&StepContext) -> Result<T, Error>,
    {
        self.run_step(name, Vec::new(), f)
    }

    /// step_with_retry is `step` with its own retry policy, over the workflow's field by field.
    pub fn step_with_retry<T, F>(
        &self,
        name: &str,
        retry: RetryPolicy,
        f: F,
    ) -> Result<T, StepError>
    where
        T: ToJson + FromJson,
        F: FnOnce(&StepContext) -> Result<T, Error>,
    {
        self.step_with_options(name, StepOptions::new().retry(retry), f)
    }

    /// step_with_options is `step` with its own options: a retry policy, an attempt timeout.
    pub fn step_with_options<T, F>(
        &self,
        name: &str,
        opts: StepOptions,
        f: F,
    ) -> Result<T, StepError>
    where
        T: ToJson + FromJson,
        F: FnOnce(&StepContext) -> Result<T, Error>,
    {
        let raw = if opts == StepOptions::default() {
            Vec::new()
        } else {
            opts.to_json().to_json_string().into_bytes()
        };
        self.run_step(name, raw, f)
    }

    fn run_step<T, F>(&self, name: &str, opts: Vec<u8>, f: F) -> Result<T, StepError>
    where
        T: ToJson + FromJson,
        F: FnOnce(&StepContext) -> Result<T, Error>,
    {
        let reply = self.queried(host::step_run(name, &opts));
        match reply.status {
            host::STATUS_OK => return decode_output(name, &reply.data),
            host::STATUS_STEP_FAILED => return Err(StepError::from_info(name, &reply.data)),
            host::STATUS_EXECUTE => {}
            s => {
                return Err(StepError::new(
                    name,
                    "abi",
                    format!("unexpected reply status {}", s),
                ))
            }
        }
        let attempt = Value::parse_bytes(&reply.data)
            .ok()
            .and_then(|v| v["attempt"].as_i64())
            .unwrap_or(1);
        let sc = StepContext {
            attempt: u32::try_from(attempt).unwrap_or(1).max(1),
        };

        IN_STEP.with(|s| s.set(true));
        let result = f(&sc);
        IN_STEP.with(|s| s.set(false));
        let (outcome, data) = match result {
            Ok(v) => (host::OUTCOME_OK, v.to_json_text()),
            Err(e) => (host::OUTCOME_ERROR, e.to_info().to_json_string()),
        };
        let reply = host::step_done(outcome, data.as_bytes());
        match reply.status {
            // Decode what was sent, as a replay will decode what was journaled.
            host::STATUS_OK => decode_output(name, data.as_bytes()),
            host::STATUS_STEP_FAILED => Err(StepError::from_info(name, &reply.data)),
            s => Err(StepError::new(
                name,
                "abi",
                format!("unexpected reply status {}", s),
            )),
        }
    }

    /// sleep suspends the run for `d`, durably: a crash or restart neither shortens nor restarts
    /// it. The step `name` records the wake-up time. It returns the run's cancellation
    /// (`Error::is_cancelled`) when the run is cancelled during it (abi/ABI.md §4.15): the
    /// workflow may compensate, then return it.
    pub fn sleep(&self, name: &str, d: Duration) -> Result<(), Error> {
        slept(name, self.queried(host::sleep(name, millis(d))))
    }

    /// continue_as_new ends this run and starts a fresh run of the same workflow with `input`
    /// and an empty journal, linked to this one (abi/ABI.md §4.14): the way a workflow that
    /// loops forever keeps its journal short. The new run takes this run's idempotency key and
    /// the events signalled to it that no wait took. It never returns, so it can end a
    /// workflow body: `ctx.continue_as_new(next)`. Not inside a step callback.
    pub fn continue_as_new<I: ToJson>(&self, input: I) -> ! {
        self.continue_with(input, false)
    }

    /// continue_as_new_on_latest_version is continue_as_new with the new run on the workflow's
    /// most recently deployed version instead of this run's: a loop picks up new code.
    pub fn continue_as_new_on_latest_version<I: ToJson>(&self, input: I) -> ! {
        self.continue_with(input, true)
    }

    fn continue_with<I: ToJson>(&self, input: I, latest: bool) -> ! {
        let mut m = Map::new();
        m.insert("input".into(), input.to_json());
        if latest {
            m.insert("latestVersion".into(), Value::Bool(true));
        }
        host::continue_as_new(Value::Object(m).to_json_string().as_bytes())
    }

    /// sleep_until suspends the run until `unix_ms` (milliseconds since the Unix epoch), as
    /// sleep does.
    pub fn sleep_until(&self, name: &str, unix_ms: i64) -> Result<(), Error> {
        slept(name, self.queried(host::sleep_until(name, unix_ms)))
    }

    /// wait_for_event suspends the run until an event arrives (one sent to this run, before or
    /// after the wait was reached, or a broadcast since the run started) and returns its
    /// payload, or until the timeout passes.
    pub fn wait_for_event<T: FromJson>(&self, name: &str, wait: Wait) -> Result<Waited<T>, Error> {
        let mut opts = object! { "event" => wait.event };
        if let (Value::Object(m), Some(pattern)) = (&mut opts, wait.matching) {
            if !matches!(pattern, Value::Object(_)) {
                return Err(Error::new(
                    "invalid_wait",
                    format!(
                        "wait {}: match must be a JSON object, not {}",
                        name,
                        pattern.kind()
                    ),
                ));
            }
            m.insert("match".into(), pattern);
        }
        if let (Value::Object(m), Some(d)) = (&mut opts, wait.timeout) {
            m.insert("timeoutMs".into(), Value::Int(millis(d).max(1)));
        }
        let reply = self.queried(host::wait_event(name, opts.to_json_string().as_bytes()));
        match reply.status {
            host::STATUS_TIMEOUT => Ok(Waited::TimedOut),
            host::STATUS_CANCELLED => Err(cancelled(&format!("wait {}", name), &reply.data)),
            host::STATUS_OK => T::from_json_text(&reply.data)
                .map(Waited::Event)
                .map_err(|e| {
                    Error::new(
                        "decode",
                        format!("wait {}: decode event payload: {}", name, e.message),
                    )
                }),
            s => Err(Error::new(
                "abi",
                format!("wait {}: unexpected reply status {}", name, s),
            )),
        }
    }

    /// log writes a record to the host's log, tagged with the tenant, workflow, run and step.
    pub fn log(&self, level: Level, msg: &str) {
        host::log(level as i32, msg);
    }

    pub fn info(&self, msg: &str) {
        self.log(Level::Info, msg);
    }

    pub fn warn(&self, msg: &str) {
        self.log(Level::Warn, msg);
    }
}

fn decode_output<T: FromJson>(name: &str, data: &[u8]) -> Result<T, StepError> {
    T::from_json_text(data)
        .map_err(|e| StepError::new(name, "decode", format!("decode step output: {}", e.message)))
}

/// workflows! declares the module's workflows and defines its exports (abi/ABI.md §3). Use it
/// once, at the crate root of a `cdylib`:
///
/// ```ignore
/// wfhost::workflows![Workflow::new("hello", "1", hello)];
/// ```
#[macro_export]
macro_rules! workflows {
    ($($w:expr),+ $(,)?) => {
        fn __wfhost_workflows() -> ::std::vec::Vec<$crate::Workflow> {
            ::std::vec![$($w),+]
        }
        #[no_mangle]
        pub extern "C" fn _initialize() {
            $crate::__export::initialize()
        }
        #[no_mangle]
        pub extern "C" fn wfhost_abi_version() -> i32 {
            $crate::ABI_VERSION
        }
        #[no_mangle]
        pub extern "C" fn wfhost_alloc(size: u32) -> u32 {
            $crate::__export::alloc(size)
        }
        #[no_mangle]
        pub extern "C" fn wfhost_describe() -> u64 {
            $crate::__export::describe(__wfhost_workflows)
        }
        #[no_mangle]
        pub extern "C" fn wfhost_run(name_ptr: u32, name_len: u32, input_ptr: u32, input_len: u32) {
            $crate::__export::run(__wfhost_workflows, name_ptr, name_len, input_ptr, input_len)
        }
    };
}

/// The bodies of the exports `workflows!` defines; not for direct use.
#[doc(hidden)]
pub mod __export {
    use super::*;

    thread_local! {
        // ALLOCATIONS keeps the buffers handed to the host alive and untouched until the run
        // that reads them (abi/ABI.md §3: the host writes into them after alloc returns).
        static ALLOCATIONS: RefCell<Vec<Vec<u8>>> = RefCell::new(Vec::new());
        // DESCRIPTION keeps the description alive while the host reads it.
        static DESCRIPTION: RefCell<Vec<u8>> = RefCell::new(Vec::new());
    }

    /// WARM_HEAP is how much heap initialisation reserves; see `initialize`.
    const WARM_HEAP: usize = 256 << 10;

    /// initialize runs once per instance, before the host snapshots its memory (abi/ABI.md §2).
    /// It grows the heap once, by an allocation it frees at once: the allocator keeps the space,
    /// so an activation that needs less heap than that never grows memory, and the host can
    /// reset its instance to the snapshot and reuse it instead of instantiating a new one
    /// (an instance whose memory grew is discarded).
    pub fn initialize() {
        drop(Vec::<u8>::with_capacity(WARM_HEAP));
    }

    pub fn alloc(size: u32) -> u32 {
        let buf = vec![0u8; (size as usize).max(1)]; // never empty, so every buffer has its own address
        let p = buf.as_ptr() as usize as u32;
        ALLOCATIONS.with(|a| a.borrow_mut().push(buf));
        p
    }

    pub fn describe(workflows: fn() -> Vec<Workflow>) -> u64 {
        let all = workflows();
        if let Err(e) = check_all(&all) {
            // The host refuses such a description anyway; trapping here puts the SDK's reason
            // on stderr, which the host quotes in the upload's error.
            host::stderr(&format!("wfhost: {}\n", e));
            std::process::abort();
        }
        let decls: Vec<Value> = all.iter().map(Workflow::decl).collect();
        // features: this SDK hands a cancellation to the workflow (abi/ABI.md §4.15) and
        // answers queries (§4.17).
        let text = object! { "workflows" => decls, "features" => vec!["cancel".to_string(), "query".to_string()] }
            .to_json_string()
            .into_bytes();
        DESCRIPTION.with(|d| {
            *d.borrow_mut() = text;
            let d = d.borrow();
            (d.as_ptr() as usize as u64) << 32 | d.len() as u64
        })
    }

    /// check_all is Workflow::check of each workflow, and each (name, version) declared once.
    pub fn check_all(all: &[Workflow]) -> Result<(), String> {
        for (i, w) in all.iter().enumerate() {
            w.check()?;
            if all[..i].iter().any(|o| o.name == w.name && o.version == w.version) {
                return Err(format!(
                    "workflow {:?} version {:?} is declared twice",
                    w.name, w.version
                ));
            }
        }
        Ok(())
    }

    /// take_buffer removes and returns the first `len` bytes of the buffer alloc returned at `ptr`.
    fn take_buffer(ptr: u32, len: u32) -> Option<Vec<u8>> {
        ALLOCATIONS.with(|a| {
            let mut a = a.borrow_mut();
            let i = a
                .iter()
                .position(|b| b.as_ptr() as usize as u32 == ptr && len as usize <= b.len())?;
            let mut b = a.swap_remove(i);
            b.truncate(len as usize);
            Some(b)
        })
    }

    pub fn run(
        workflows: fn() -> Vec<Workflow>,
        name_ptr: u32,
        name_len: u32,
        input_ptr: u32,
        input_len: u32,
    ) {
        std::panic::set_hook(Box::new(on_panic));
        let (name, input) = match (
            take_buffer(name_ptr, name_len),
            take_buffer(input_ptr, input_len),
        ) {
            (Some(n), Some(i)) => (n, i),
            _ => {
                let e = Error::new(
                    "abi_violation",
                    "wfhost_run: the name or input is not in a buffer from wfhost_alloc",
                );
                host::fail(e.to_info().to_json_string().as_bytes());
                return;
            }
        };
        ALLOCATIONS.with(|a| a.borrow_mut().clear());
        let name = String::from_utf8_lossy(&name).into_owned();
        let all = workflows();
        let w = match all.iter().find(|w| w.name == name) {
            Some(w) => w,
            None => {
                let e = Error::new(
                    "unknown_workflow",
                    format!("this module has no workflow {}", name),
                );
                host::fail(e.to_info().to_json_string().as_bytes());
                return;
            }
        };
        let ctx = Context {
            workflow: name.clone(),
            queries: RefCell::new(Vec::new()),
        };
        match (w.run)(&ctx, &input) {
            Ok(out) => host::complete(out.as_bytes()),
            Err(e) => host::fail(e.to_info().to_json_string().as_bytes()),
        }
    }

    /// on_panic reports a panic before the abort (the SDK is built with panic=abort: nothing
    /// unwinds). In a step callback the panic is the attempt's error, so it is retried like one
    /// (step_done suspends the run and never returns); once the attempts are spent the run
    /// traps. The message goes to stderr, which the host logs and quotes in the trap's error.
    fn on_panic(info: &std::panic::PanicInfo<'_>) {
        let msg = info.to_string();
        if IN_STEP.with(|s| s.replace(false)) {
            let e = Error::msg(format!("step {}", msg));
            host::step_done(host::OUTCOME_ERROR, e.to_info().to_json_string().as_bytes());
        }
        host::stderr(&format!("workflow {}\n", msg));
    }
}

#[cfg(test)]
mod retry_tests {
    use super::*;

    #[test]
    fn retry_policy_wire_shape() {
        let p = RetryPolicy::new()
            .attempts(2)
            .base(Duration::from_millis(250))
            .pause_when_exhausted();
        assert_eq!(
            p.to_json().to_json_string(),
            r#"{"attempts":2,"baseMs":250,"onExhausted":"pause"}"#
        );
        assert_eq!(RetryPolicy::new().to_json().to_json_string(), "{}");
    }
}

#[cfg(test)]
mod describe_tests {
    use super::*;

    fn body(_: &Context, _: Value) -> Result<Value, Error> {
        Ok(Value::Null)
    }

    // The declaration the host reads: flow and onEnd beside the other fields, left out when
    // the workflow has none.
    #[test]
    fn decl_carries_flow_and_on_end() {
        let w = Workflow::new("digest", "1", body)
            .flow(Flow::new().concurrency("$.customerId", 1).priority(-30))
            .on_end(Hook::start(&[RunEnd::Completed], "steps").version("1"))
            .on_end(Hook::webhook(&[RunEnd::Failed, RunEnd::Cancelled], "https://ops.example.com/x"));
        assert_eq!(w.check(), Ok(()));
        assert_eq!(
            w.decl().to_json_string(),
            r#"{"flow":{"concurrency":{"key":"$.customerId","limit":1},"priority":-30},"name":"digest","onEnd":[{"start":{"version":"1","workflow":"steps"},"when":["completed"]},{"webhook":"https://ops.example.com/x","when":["failed","cancelled"]}],"version":"1"}"#
        );
        assert_eq!(
            Workflow::new("plain", "1", body).decl().to_json_string(),
            r#"{"name":"plain","version":"1"}"#
        );
    }

    // A declaration the host would refuse is refused by check, naming the workflow and the fault.
    #[test]
    fn check_refuses_what_the_host_refuses() {
        let cases = vec![
            (Workflow::new("", "1", body), "workflow name is empty".to_string()),
            (Workflow::new("a/b", "1", body), r#"workflow name "a/b" contains "/""#.to_string()),
            (Workflow::new("w", "", body), r#"workflow "w": version is empty"#.to_string()),
            (Workflow::new("w", "1\0", body), r#"workflow "w": not storable: version contains a NUL character"#.to_string()),
            (Workflow::new("w", "1", body).trigger("a#b"), r##"workflow "w": trigger event name "a#b" contains "#", which marks repeated steps"##.to_string()),
            (
                Workflow::new("w", "1", body).flow(Flow::new().rate("$.k", 5, Duration::from_secs(8 * 24 * 3600))),
                r#"workflow "w": flow.rate.periodMs 691200000 out of range 1..604800000"#.to_string(),
            ),
            (
                Workflow::new("w", "1", body).on_end(Hook::webhook(&[RunEnd::Failed], "gopher://x")),
                r#"workflow "w": onEnd[0]: webhook URL "gopher://x": the scheme must be http or https"#.to_string(),
            ),
        ];
        for (w, want) in cases {
            assert_eq!(w.check(), Err(want));
        }
        let twice = vec![Workflow::new("w", "1", body), Workflow::new("w", "2", body), Workflow::new("w", "1", body)];
        assert_eq!(
            __export::check_all(&twice),
            Err(r#"workflow "w" version "1" is declared twice"#.to_string())
        );
        assert_eq!(__export::check_all(&twice[..2]), Ok(()));
    }
}
