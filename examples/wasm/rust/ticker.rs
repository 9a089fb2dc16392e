//! ticker: a loop that continues as new after every turn (abi/ABI.md §4.14); each run journals
//! only its own turn's ticks, so the loop can run past any step cap.

use wfhost::{object, Context, Error, FromJson, Value, Workflow};

struct Input {
    turn: i64,
    turns: i64, // default 1
    ticks: i64, // per turn; default 1
    total: i64, // the sum of every earlier turn's ticks
}

impl FromJson for Input {
    fn from_json(v: &Value) -> Result<Input, Error> {
        Ok(Input {
            turn: v.field("turn")?,
            turns: v.field("turns")?,
            ticks: v.field("ticks")?,
            total: v.field("total")?,
        })
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("ticker", "1", ticker)
}

fn ticker(ctx: &Context, input: Input) -> Result<Value, Error> {
    let ticks = input.ticks.max(1);
    let mut total = input.total;
    for i in 1..=ticks {
        let n: i64 = ctx.step("tick", |_| Ok(input.turn * ticks + i))?;
        total += n;
    }
    if input.turn + 1 >= input.turns.max(1) {
        return Ok(object! { "turns" => input.turn + 1, "total" => total });
    }
    ctx.continue_as_new(object! {
        "turn" => input.turn + 1,
        "turns" => input.turns,
        "ticks" => ticks,
        "total" => total
    })
}
