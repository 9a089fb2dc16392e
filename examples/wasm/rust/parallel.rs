//! parallel (abi/ABI.md §4.18): a fan-out of n branches joined as the input says. Branch i
//! squares i in its step "square", or fails for good there when i is in `fail`; the caller sums
//! the squares of the branches that completed. The same workflow as examples/wasm/go.

use wfhost::{
    object, BranchStatus, Context, Error, FromJson, Join, ParallelOptions, Value, Workflow,
};

struct Input {
    n: usize,
    join: String,   // "all" (or empty), "first" or "allSettled"
    fail: Vec<i64>, // the branches whose step fails
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input {
            n: v.field("n")?,
            join: v.field("join")?,
            fail: v.field("fail")?,
        })
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("parallel", "1", parallel)
}

fn parallel(ctx: &Context, input: Input) -> Result<Value, Error> {
    let join = match input.join.as_str() {
        "" => Join::All,
        j => Join::parse(j).ok_or_else(|| {
            Error::new(
                "invalid_input",
                format!("join {:?} is not all, first or allSettled", j),
            )
            .non_retryable()
        })?,
    };
    let fail = input.fail;
    let res = ctx.parallel(
        "fan",
        input.n,
        ParallelOptions::new().join(join),
        |ctx, i| {
            let i = i as i64;
            ctx.step("square", |_| -> Result<Value, Error> {
                if fail.contains(&i) {
                    return Err(
                        Error::new("branch_boom", format!("branch {} fails", i)).non_retryable()
                    );
                }
                Ok(object! { "sq" => i * i })
            })
            .map_err(Error::from)
        },
    )?;
    let statuses: Vec<String> = res
        .branches
        .iter()
        .map(|b| b.status.as_str().to_string())
        .collect();
    let sum: Value = ctx.step("sum", |_| {
        let sum: i64 = res
            .branches
            .iter()
            .filter(|b| b.status == BranchStatus::Completed)
            .filter_map(|b| b.output.as_ref().and_then(|o| o["sq"].as_i64()))
            .sum();
        Ok(object! { "sum" => sum })
    })?;
    let first = res.first.map(|i| i as i64).unwrap_or(-1);
    Ok(object! { "first" => first, "statuses" => statuses, "sum" => sum["sum"].clone() })
}
