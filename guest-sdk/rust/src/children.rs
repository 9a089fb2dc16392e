//! Child workflows (abi/ABI.md §4.16): a workflow starts another workflow of its tenant as a
//! durable step, exactly once, and awaits its result (`Context::run_child`) or detaches from it
//! (`Context::start_child`).

use std::time::Duration;

use crate::json::{Map, ToJson, Value};
use crate::{decode_output, host, millis, Context, FromJson, StepError};

/// ChildOptions adjust a child run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChildOptions {
    /// id is the child's id (its idempotency key) instead of the derived
    /// "<parent run id>:<step key>"; an id another run holds fails the step with child_refused.
    pub id: Option<String>,
    /// version runs the child on that version of its workflow instead of the latest.
    pub version: Option<String>,
    /// timeout is the child run's deadline after it starts (its run_timeout); zero: none.
    pub timeout: Duration,
    /// abandon_on_cancel leaves the child running when the parent is cancelled or terminated
    /// (an awaited child is cancelled with it by default).
    pub abandon_on_cancel: bool,
}

impl ChildOptions {
    pub fn new() -> ChildOptions {
        ChildOptions::default()
    }
    pub fn id(mut self, id: &str) -> ChildOptions {
        self.id = Some(id.to_string());
        self
    }
    pub fn version(mut self, v: &str) -> ChildOptions {
        self.version = Some(v.to_string());
        self
    }
    pub fn timeout(mut self, d: Duration) -> ChildOptions {
        self.timeout = d;
        self
    }
    pub fn abandon_on_cancel(mut self) -> ChildOptions {
        self.abandon_on_cancel = true;
        self
    }
}

/// The ABI's ChildRun JSON.
fn child_request<I: ToJson>(workflow: &str, input: I, detach: bool, opts: &ChildOptions) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("workflow".into(), Value::String(workflow.to_string()));
    m.insert("input".into(), input.to_json());
    if let Some(id) = &opts.id {
        m.insert("id".into(), Value::String(id.clone()));
    }
    if let Some(v) = &opts.version {
        m.insert("version".into(), Value::String(v.clone()));
    }
    if millis(opts.timeout) > 0 {
        m.insert("timeoutMs".into(), millis(opts.timeout).to_json());
    }
    if detach {
        m.insert("detach".into(), Value::Bool(true));
    }
    if opts.abandon_on_cancel {
        m.insert("parentClose".into(), Value::String("abandon".into()));
    }
    Value::Object(m).to_json_string().into_bytes()
}

fn unexpected(name: &str, status: i32) -> StepError {
    StepError::new(name, "abi", format!("unexpected reply status {}", status))
}

impl Context {
    /// run_child starts a run of `workflow` with `input` as the durable step `name` and waits
    /// for its end, the parent holding no instance meanwhile: the child's output, or a
    /// StepError with code child_failed (the child failed or was cancelled; details: its runId,
    /// status and error), child_refused (no such workflow, or the id is another run's) or
    /// cancelled (this run was cancelled while it waited: the child is cancelled too, unless
    /// abandon_on_cancel). Not inside a step callback.
    pub fn run_child<T: FromJson, I: ToJson>(
        &self,
        name: &str,
        workflow: &str,
        input: I,
        opts: ChildOptions,
    ) -> Result<T, StepError> {
        let reply = self.queried(host::child_run(name, &child_request(workflow, input, false, &opts)));
        match reply.status {
            host::STATUS_OK => decode_output(name, &reply.data),
            host::STATUS_STEP_FAILED => Err(StepError::from_info(name, &reply.data)),
            s => Err(unexpected(name, s)),
        }
    }

    /// start_child starts a run of `workflow` with `input` as the durable step `name` and
    /// returns its run id at once, without waiting for it. Errors are run_child's but
    /// child_failed.
    pub fn start_child<I: ToJson>(
        &self,
        name: &str,
        workflow: &str,
        input: I,
        opts: ChildOptions,
    ) -> Result<String, StepError> {
        let reply = self.queried(host::child_run(name, &child_request(workflow, input, true, &opts)));
        match reply.status {
            host::STATUS_OK => {
                let v: Value = decode_output(name, &reply.data)?;
                Ok(v["runId"].as_str().unwrap_or("").to_string())
            }
            host::STATUS_STEP_FAILED => Err(StepError::from_info(name, &reply.data)),
            s => Err(unexpected(name, s)),
        }
    }
}
