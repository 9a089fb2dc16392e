//! order-saga: reserve stock, hold it for holdMs, charge the card and ship; when the charge fails
//! for good, or the run is cancelled before it (abi/ABI.md §4.15), release the reservation (the
//! compensation) and fail with the payment's error or the cancellation.

use std::time::Duration;

use wfhost::{object, Backoff, Context, Error, FromJson, RetryPolicy, ToJson, Value, Workflow};

struct Order {
    order_id: String,
    amount: i64,
    fail_payment: bool,
    hold_ms: i64, // hold the reservation this long before the charge
}

impl FromJson for Order {
    fn from_json(v: &Value) -> Result<Order, Error> {
        Ok(Order {
            order_id: v.field("orderId")?,
            amount: v.field("amount")?,
            fail_payment: v.field("failPayment")?,
            hold_ms: v.field("holdMs")?,
        })
    }
}

struct OrderResult {
    order_id: String,
    shipped: bool,
}

impl ToJson for OrderResult {
    fn to_json(&self) -> Value {
        // The Go example's `reason` is empty here and left out (omitempty); `compensated` stays.
        object! { "orderId" => self.order_id, "shipped" => self.shipped, "compensated" => false }
    }
}

pub fn workflow() -> Workflow {
    Workflow::new("order-saga", "1", order_saga).retention_days(90)
}

fn order_saga(ctx: &Context, o: Order) -> Result<OrderResult, Error> {
    let reservation: String =
        ctx.step("reserve-inventory", |_| Ok(format!("res-{}", o.order_id)))?;
    let compensate = |cause: Error| -> Result<OrderResult, Error> {
        ctx.step("release-inventory", |_| {
            ctx.info(&format!("released {}", reservation));
            Ok(true)
        })?;
        Err(cause)
    };
    if o.hold_ms > 0 {
        if let Err(cancelled) = ctx.sleep("hold", Duration::from_millis(o.hold_ms as u64)) {
            return compensate(cancelled);
        }
    }

    let retry = RetryPolicy::new()
        .attempts(3)
        .backoff(Backoff::Fixed)
        .base(Duration::from_millis(10));
    let charge = ctx.step_with_retry("charge-payment", retry, |sc| {
        if o.fail_payment {
            return Err(Error::new(
                "card_declined",
                format!("card declined for {} (attempt {})", o.amount, sc.attempt()),
            ));
        }
        Ok(format!("ch-{}-{}", o.order_id, o.amount))
    });
    if let Err(pay_err) = charge {
        return compensate(pay_err.into());
    }

    ctx.step("ship-order", |_| Ok(format!("tracking-{}", o.order_id)))?;
    Ok(OrderResult {
        order_id: o.order_id.clone(),
        shipped: true,
    })
}
