//! parent and child (abi/ABI.md §4.16): a parent that starts an audit child it does not wait
//! for, then awaits a child that squares a number, and compensates when that child fails or
//! the parent is cancelled while it waits. The same workflows as examples/wasm/go.

use std::time::Duration;

use wfhost::{object, ChildOptions, Context, Error, FromJson, ToJson, Value, Workflow};

struct ChildInput {
    n: i64,
    fail: bool,
    hold_ms: i64, // wait this long before answering (a child to cancel)
}

impl FromJson for ChildInput {
    fn from_json(v: &Value) -> Result<ChildInput, Error> {
        Ok(ChildInput {
            n: v.field("n")?,
            fail: v.field("fail")?,
            hold_ms: v.field("holdMs")?,
        })
    }
}

impl ToJson for ChildInput {
    fn to_json(&self) -> Value {
        object! { "n" => self.n, "fail" => self.fail, "holdMs" => self.hold_ms }
    }
}

struct ChildResult {
    square: i64,
}

impl FromJson for ChildResult {
    fn from_json(v: &Value) -> Result<ChildResult, Error> {
        Ok(ChildResult {
            square: v.field("square")?,
        })
    }
}

impl ToJson for ChildResult {
    fn to_json(&self) -> Value {
        object! { "square" => self.square }
    }
}

struct ParentInput {
    n: i64,
    fail_child: bool,
    hold_ms: i64,
    audit: bool, // also start a detached audit child
}

impl FromJson for ParentInput {
    fn from_json(v: &Value) -> Result<ParentInput, Error> {
        Ok(ParentInput {
            n: v.field("n")?,
            fail_child: v.field("failChild")?,
            hold_ms: v.field("holdMs")?,
            audit: v.field("audit")?,
        })
    }
}

struct ParentResult {
    square: i64,
    audited: bool,
}

impl ToJson for ParentResult {
    fn to_json(&self) -> Value {
        object! { "square" => self.square, "audited" => self.audited }
    }
}

pub fn child_workflow() -> Workflow {
    Workflow::new("child", "1", child)
}

pub fn parent_workflow() -> Workflow {
    Workflow::new("parent", "1", parent)
}

/// child squares n, after holding for holdMs; with fail it fails for good after the square.
fn child(ctx: &Context, input: ChildInput) -> Result<ChildResult, Error> {
    let sq: i64 = ctx.step("square", |_| Ok(input.n * input.n))?;
    if input.hold_ms > 0 {
        ctx.sleep("hold", Duration::from_millis(input.hold_ms as u64))?;
    }
    if input.fail {
        let _: i64 = ctx.step("explode", |_| {
            Err(Error::new("child_boom", format!("the child failed on {}", input.n)).non_retryable())
        })?;
    }
    Ok(ChildResult { square: sq })
}

/// parent starts the audit child (detached, with an id of its own) when asked, awaits the
/// square child, and compensates when that child fails or this run is cancelled meanwhile.
fn parent(ctx: &Context, input: ParentInput) -> Result<ParentResult, Error> {
    if input.audit {
        let one = ChildInput { n: 1, fail: false, hold_ms: 0 };
        ctx.start_child("audit", "child", one, ChildOptions::new().id("audit-of-square"))?;
    }
    let sq = ChildInput { n: input.n, fail: input.fail_child, hold_ms: input.hold_ms };
    let res: Result<ChildResult, _> = ctx.run_child("square", "child", sq, ChildOptions::new());
    match res {
        Ok(r) => Ok(ParentResult {
            square: r.square,
            audited: input.audit,
        }),
        Err(e) => {
            let _: bool = ctx.step("compensate", |_| Ok(true))?;
            Err(e.into())
        }
    }
}
