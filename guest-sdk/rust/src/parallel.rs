//! Parallel steps (abi/ABI.md §4.18): a workflow fans out branches that run concurrently, each a
//! run of its own, and joins them as one durable step (`Context::parallel`).
//!
//! A branch is forked by replay: its run replays the caller's journal and reaches the same
//! `parallel` call, where the host answers BRANCH with the branch's index instead of a result.
//! The SDK then runs the branch's function for that index and ends the branch run with what it
//! returns (`branch_done`), so the code after the call runs only in the caller.

use crate::json::{Map, ToJson, Value};
use crate::{host, Context, Error, FromJson, StepError};

/// Join says when a parallel step is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Join {
    /// All succeeds when every branch completed, and fails with branch_failed at the first
    /// branch that fails (the others are cancelled).
    All,
    /// First succeeds at the first branch that completes (the others are cancelled), and fails
    /// with branch_failed when every branch failed.
    First,
    /// AllSettled succeeds when every branch ended, however each ended.
    AllSettled,
}

impl Join {
    /// as_str is the join's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Join::All => "all",
            Join::First => "first",
            Join::AllSettled => "allSettled",
        }
    }

    /// parse reads a join's wire name; None for any other text.
    pub fn parse(s: &str) -> Option<Join> {
        match s {
            "all" => Some(Join::All),
            "first" => Some(Join::First),
            "allSettled" => Some(Join::AllSettled),
            _ => None,
        }
    }
}

impl Default for Join {
    fn default() -> Join {
        Join::All
    }
}

/// ParallelOptions adjust a parallel step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParallelOptions {
    /// join says when the step is decided; All by default.
    pub join: Join,
    /// max_concurrent bounds how many of the step's branches run at once (the others start as
    /// earlier ones end, in branch order); 0 takes the host's bound (16).
    pub max_concurrent: u32,
}

impl ParallelOptions {
    pub fn new() -> ParallelOptions {
        ParallelOptions::default()
    }
    pub fn join(mut self, j: Join) -> ParallelOptions {
        self.join = j;
        self
    }
    pub fn max_concurrent(mut self, n: u32) -> ParallelOptions {
        self.max_concurrent = n;
        self
    }
}

/// The ABI's Parallel JSON.
fn parallel_request(n: usize, opts: &ParallelOptions) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("branches".into(), (n as u64).to_json());
    m.insert("join".into(), opts.join.as_str().to_json());
    m.insert("maxConcurrent".into(), opts.max_concurrent.to_json());
    Value::Object(m).to_json_string().into_bytes()
}

/// BranchStatus is how a branch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchStatus {
    Completed,
    /// Failed is a branch that failed, or was cancelled other than by the join.
    Failed,
    /// Cancelled is a branch the join cancelled, or never started.
    Cancelled,
}

impl BranchStatus {
    /// as_str is the status's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            BranchStatus::Completed => "completed",
            BranchStatus::Failed => "failed",
            BranchStatus::Cancelled => "cancelled",
        }
    }
}

/// Branch is one branch's end, as the ParallelResult reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub status: BranchStatus,
    /// output is a completed branch's output.
    pub output: Option<Value>,
    /// error is a failed branch's error.
    pub error: Option<Error>,
}

impl Branch {
    /// output_as decodes a completed branch's output; a branch that did not complete is an
    /// error saying how it ended.
    pub fn output_as<T: FromJson>(&self) -> Result<T, Error> {
        match &self.output {
            Some(v) if self.status == BranchStatus::Completed => T::from_json(v),
            _ => Err(Error::new(
                "branch_not_completed",
                format!("the branch {}", self.status.as_str()),
            )),
        }
    }
}

/// ParallelResult is what a parallel step returns once its join is decided: every branch's end
/// in branch order, and the index of the first branch to complete.
#[derive(Clone, Debug, PartialEq)]
pub struct ParallelResult {
    pub branches: Vec<Branch>,
    /// first is the index of the first branch to complete; None when none did.
    pub first: Option<usize>,
}

impl FromJson for ParallelResult {
    fn from_json(v: &Value) -> Result<ParallelResult, Error> {
        let list = v["branches"]
            .as_array()
            .ok_or_else(|| Error::new("decode", "a ParallelResult needs a branches array"))?;
        let mut branches = Vec::with_capacity(list.len());
        for (i, b) in list.iter().enumerate() {
            let status = match b["status"].as_str() {
                Some("completed") => BranchStatus::Completed,
                Some("failed") => BranchStatus::Failed,
                Some("cancelled") => BranchStatus::Cancelled,
                other => {
                    return Err(Error::new(
                        "decode",
                        format!("branch {}: unknown status {:?}", i, other),
                    ))
                }
            };
            let output = match status {
                BranchStatus::Completed => Some(b.get("output").cloned().unwrap_or(Value::Null)),
                _ => None,
            };
            let error = b
                .get("error")
                .filter(|e| !e.is_null())
                .map(|e| Error::from_info(e.to_json_string().as_bytes()));
            branches.push(Branch {
                status,
                output,
                error,
            });
        }
        let first = match v["first"].as_i64() {
            Some(i) if i >= 0 && (i as usize) < branches.len() => Some(i as usize),
            _ => None,
        };
        Ok(ParallelResult { branches, first })
    }
}

/// The ABI's ParallelResult JSON, so a workflow may return it or keep it in a step's output.
impl ToJson for ParallelResult {
    fn to_json(&self) -> Value {
        let branches: Vec<Value> = self
            .branches
            .iter()
            .map(|b| {
                let mut m = Map::new();
                m.insert("status".into(), b.status.as_str().to_json());
                if let Some(o) = &b.output {
                    m.insert("output".into(), o.clone());
                }
                if let Some(e) = &b.error {
                    m.insert("error".into(), e.to_info());
                }
                Value::Object(m)
            })
            .collect();
        let first = self.first.map(|i| i as i64).unwrap_or(-1);
        crate::object! { "branches" => branches, "first" => first }
    }
}

/// branch_index reads the index a BRANCH reply carries; it must name one of the n branches.
fn branch_index(data: &[u8], n: usize) -> Result<usize, Error> {
    let v = Value::parse_bytes(data).unwrap_or(Value::Null);
    match v["branch"].as_i64() {
        Some(i) if i >= 0 && (i as usize) < n => Ok(i as usize),
        _ => Err(Error::new(
            "abi",
            format!(
                "the host answered BRANCH with {}, not a branch of {}",
                String::from_utf8_lossy(data),
                n
            ),
        )
        .non_retryable()),
    }
}

/// branch_end is how a branch's function ended, as branch_done takes it: outcome 0 and the
/// output JSON, or 1 and an ErrorInfo JSON.
fn branch_end<T: ToJson>(result: Result<T, Error>) -> (u32, String) {
    match result {
        Ok(v) => (host::OUTCOME_OK, v.to_json_text()),
        Err(e) => (host::OUTCOME_ERROR, e.to_info().to_json_string()),
    }
}

impl Context {
    /// parallel runs `n` branches (1 to 64) concurrently as the durable step `name` and joins
    /// them as `opts.join` says (abi/ABI.md §4.18). Branch `i` runs `f(ctx, i)`, in a run of its
    /// own whose journal starts as a copy of this run's: anything the workflow did before the
    /// call is replayed, not done again, and `f` may make any durable call (steps, sleeps,
    /// waits, children, another parallel step under another name). What `f` returns is the
    /// branch's output or error. `f` is called only in a branch's own run; the caller waits,
    /// holding no instance, and gets the ParallelResult, or a StepError with code
    /// branch_failed (Join::All: a branch failed; Join::First: every branch failed; details:
    /// the branch, its runId, status and error) or cancelled (this run was cancelled: its
    /// branches are cancelled too). Not inside a step callback.
    ///
    /// A branch learns its index only from `i`: code before the call runs the same in every
    /// branch, so a branch's work must depend on `i` and on what was known before the call.
    pub fn parallel<T, F>(
        &self,
        name: &str,
        n: usize,
        opts: ParallelOptions,
        f: F,
    ) -> Result<ParallelResult, StepError>
    where
        T: ToJson,
        F: FnOnce(&Context, usize) -> Result<T, Error>,
    {
        let reply = self.queried(host::parallel_run(name, &parallel_request(n, &opts)));
        match reply.status {
            host::STATUS_OK => ParallelResult::from_json_text(&reply.data).map_err(|e| {
                StepError::new(
                    name,
                    "decode",
                    format!("decode parallel result: {}", e.message),
                )
            }),
            host::STATUS_STEP_FAILED => Err(StepError::from_info(name, &reply.data)),
            host::STATUS_BRANCH => {
                let (outcome, data) =
                    branch_end(branch_index(&reply.data, n).and_then(|i| f(self, i)));
                host::branch_done(outcome, data.as_bytes())
            }
            s => Err(StepError::new(
                name,
                "abi",
                format!("unexpected reply status {}", s),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_wire_shape() {
        let req = parallel_request(3, &ParallelOptions::new());
        assert_eq!(
            String::from_utf8(req).unwrap(),
            r#"{"branches":3,"join":"all","maxConcurrent":0}"#
        );
        let req = parallel_request(
            5,
            &ParallelOptions::new()
                .join(Join::AllSettled)
                .max_concurrent(2),
        );
        assert_eq!(
            String::from_utf8(req).unwrap(),
            r#"{"branches":5,"join":"allSettled","maxConcurrent":2}"#
        );
        for j in [Join::All, Join::First, Join::AllSettled] {
            assert_eq!(Join::parse(j.as_str()), Some(j));
        }
        assert_eq!(Join::parse("any"), None);
    }

    #[test]
    fn result_round_trip() {
        let text = r#"{"branches":[{"status":"completed","output":{"sq":0}},{"status":"failed","error":{"code":"branch_boom","message":"branch 1 fails","nonRetryable":true}},{"status":"cancelled"}],"first":0}"#;
        let r = ParallelResult::from_json_text(text.as_bytes()).unwrap();
        assert_eq!(r.first, Some(0));
        assert_eq!(r.branches.len(), 3);
        assert_eq!(r.branches[0].status, BranchStatus::Completed);
        assert_eq!(
            r.branches[0].output_as::<Value>().unwrap()["sq"].as_i64(),
            Some(0)
        );
        let e = r.branches[1].error.as_ref().unwrap();
        assert_eq!(
            (e.code.as_str(), e.message.as_str(), e.non_retryable),
            ("branch_boom", "branch 1 fails", true)
        );
        assert!(r.branches[1].output_as::<Value>().is_err());
        assert_eq!(r.branches[2].status, BranchStatus::Cancelled);
        assert_eq!(r.to_json(), Value::parse(text).unwrap());
    }

    #[test]
    fn result_without_a_first_branch() {
        let r = ParallelResult::from_json_text(
            br#"{"branches":[{"status":"failed","error":{"message":"x"}}],"first":-1}"#,
        )
        .unwrap();
        assert_eq!(r.first, None);
        assert_eq!(r.to_json()["first"].as_i64(), Some(-1));
        // A completed branch whose output is null keeps it.
        let r = ParallelResult::from_json_text(
            br#"{"branches":[{"status":"completed","output":null}],"first":0}"#,
        )
        .unwrap();
        assert_eq!(r.branches[0].output, Some(Value::Null));
    }

    #[test]
    fn malformed_results_are_errors() {
        for text in [
            &b"{}"[..],
            b"[]",
            b"null",
            br#"{"branches":{}}"#,
            br#"{"branches":[{"status":"lost"}],"first":0}"#,
            br#"{"branches":[{}],"first":0}"#,
            b"\xff\xfe",
        ] {
            assert!(
                ParallelResult::from_json_text(text).is_err(),
                "{:?} was accepted",
                String::from_utf8_lossy(text)
            );
        }
        // A first index outside the branches is no first branch, not a panic later.
        let r = ParallelResult::from_json_text(br#"{"branches":[],"first":7}"#).unwrap();
        assert_eq!(r.first, None);
    }

    #[test]
    fn branch_index_is_checked() {
        assert_eq!(branch_index(br#"{"branch":0}"#, 3).unwrap(), 0);
        assert_eq!(branch_index(br#"{"branch":2}"#, 3).unwrap(), 2);
        for bad in [
            &br#"{"branch":3}"#[..],
            br#"{"branch":-1}"#,
            br#"{"branch":"1"}"#,
            br#"{"branch":1.5}"#,
            b"{}",
            b"",
            b"\xff",
        ] {
            let e = branch_index(bad, 3).unwrap_err();
            assert_eq!(e.code, "abi");
            assert!(e.non_retryable);
        }
    }

    #[test]
    fn branch_end_encodes_output_or_error_info() {
        let ok: Result<Value, Error> = Ok(crate::object! { "sq" => 4 });
        assert_eq!(
            branch_end(ok),
            (host::OUTCOME_OK, r#"{"sq":4}"#.to_string())
        );
        let err: Result<Value, Error> =
            Err(Error::new("branch_boom", "branch 1 fails").non_retryable());
        assert_eq!(
            branch_end(err),
            (
                host::OUTCOME_ERROR,
                r#"{"code":"branch_boom","message":"branch 1 fails","nonRetryable":true}"#
                    .to_string()
            )
        );
        // A step's failure returned from a branch says which step failed, as from a workflow.
        let step = StepError::from_info(
            "square",
            br#"{"code":"branch_boom","message":"branch 1 fails"}"#,
        );
        let err: Result<Value, Error> = Err(step.into());
        assert_eq!(
            branch_end(err).1,
            r#"{"code":"branch_boom","message":"step square failed: branch_boom: branch 1 fails"}"#
        );
    }
}
