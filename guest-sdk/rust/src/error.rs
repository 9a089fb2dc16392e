//! Errors as they cross the ABI (abi/ABI.md §5): a code, a message and, on a step error, whether
//! the remaining attempts are skipped.

use std::fmt;

use crate::json::{Map, Value};

/// Error is a workflow's or a step callback's error. A step callback's Error with
/// `non_retryable` set fails the step at once; any other is retried by the step's policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    /// code classifies the error (`card_declined`); empty means the host's `workflow_error`.
    pub code: String,
    pub message: String,
    pub non_retryable: bool,
    /// details is any JSON to keep with the error.
    pub details: Option<Value>,
}

impl Error {
    /// new returns an error with a code.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Error {
        Error {
            code: code.into(),
            message: message.into(),
            non_retryable: false,
            details: None,
        }
    }

    /// msg returns an error without a code.
    pub fn msg(message: impl Into<String>) -> Error {
        Error::new("", message)
    }

    /// non_retryable marks the error so the step fails at once, without retries.
    pub fn non_retryable(mut self) -> Error {
        self.non_retryable = true;
        self
    }

    /// is_cancelled reports whether the error is the run's cancellation, as a step, a sleep or
    /// a wait returns it once the run is cancelled (abi/ABI.md §4.15). A workflow that sees it
    /// may run compensation steps, which run as usual, and then return it: the run ends
    /// cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.code == crate::CODE_CANCELLED
    }

    /// with_details attaches JSON details.
    pub fn with_details(mut self, details: Value) -> Error {
        self.details = Some(details);
        self
    }

    /// to_info is the error as an ABI `ErrorInfo`.
    pub(crate) fn to_info(&self) -> Value {
        let mut m = Map::new();
        if !self.code.is_empty() {
            m.insert("code".into(), Value::String(self.code.clone()));
        }
        m.insert("message".into(), Value::String(self.message.clone()));
        if self.non_retryable {
            m.insert("nonRetryable".into(), Value::Bool(true));
        }
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        Value::Object(m)
    }

    /// from_info reads an `ErrorInfo` the host sent; text that is not one becomes the message.
    pub(crate) fn from_info(data: &[u8]) -> Error {
        match Value::parse_bytes(data) {
            Ok(v @ Value::Object(_)) => Error {
                code: v["code"].as_str().unwrap_or("").to_string(),
                message: v["message"].as_str().unwrap_or("").to_string(),
                non_retryable: v["nonRetryable"].as_bool().unwrap_or(false),
                details: v.get("details").cloned(),
            },
            _ => Error::msg(String::from_utf8_lossy(data).into_owned()),
        }
    }
}

/// Display is "code: message", or the message alone when there is no code.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.code, self.message)
        }
    }
}

impl std::error::Error for Error {}

impl From<&str> for Error {
    fn from(message: &str) -> Error {
        Error::msg(message)
    }
}

impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::msg(message)
    }
}

/// StepError is a step's final failure as journaled: its attempts are spent, or its error was
/// non-retryable. The workflow may compensate, or return it with `?`: the run then fails with
/// the step's code and the message "step NAME failed: CODE: MESSAGE".
#[derive(Clone, Debug, PartialEq)]
pub struct StepError {
    pub step: String,
    pub code: String,
    pub message: String,
    pub details: Option<Value>,
}

impl StepError {
    pub(crate) fn new(step: &str, code: &str, message: String) -> StepError {
        StepError {
            step: step.to_string(),
            code: code.to_string(),
            message,
            details: None,
        }
    }

    pub(crate) fn from_info(step: &str, data: &[u8]) -> StepError {
        let e = Error::from_info(data);
        StepError {
            step: step.to_string(),
            code: e.code,
            message: e.message,
            details: e.details,
        }
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code.is_empty() {
            write!(f, "step {} failed: {}", self.step, self.message)
        } else {
            write!(
                f,
                "step {} failed: {}: {}",
                self.step, self.code, self.message
            )
        }
    }
}

impl std::error::Error for StepError {}

/// A StepError returned from a workflow keeps its code and says which step failed.
impl From<StepError> for Error {
    fn from(e: StepError) -> Error {
        let message = e.to_string();
        Error {
            code: e.code,
            message,
            non_retryable: false,
            details: e.details,
        }
    }
}
