import { Backoff, Context, Fields, Result, StepContext, Value, register } from "wfhost-as";

// The order-saga workflow of examples/wasm/go/saga.go.

register("order-saga", "1", orderSaga, { retentionDays: 90 });

class Order {
  constructor(
    public orderId: string,
    public amount: i64,
    public failPayment: bool,
  ) {}
}

/**
 * orderSaga reserves stock, holds it for holdMs, charges the card and ships. When the charge
 * fails for good, or the run is cancelled before it (abi/ABI.md §4.15), it releases the
 * reservation (the compensation) and fails with the payment's error or the cancellation.
 */
function orderSaga(ctx: Context, input: Value): Result {
  const f = new Fields(input, "workflow input");
  const o = new Order(f.string("orderId"), f.int("amount"), f.bool("failPayment"));
  if (f.error != null) return Result.err(f.error!);

  const reservation = ctx.step("reserve-inventory", o, (sc: StepContext, o: Order): Result => {
    return Result.ok(Value.string("res-" + o.orderId));
  });
  if (!reservation.ok) return reservation;
  const holdMs = f.int("holdMs"); // hold the reservation this long before the charge
  if (holdMs > 0) {
    const held = ctx.sleep("hold", holdMs);
    if (!held.ok) return compensate(ctx, reservation.value.asString(), held);
  }

  const pay = ctx.step(
    "charge-payment",
    o,
    (sc: StepContext, o: Order): Result => {
      if (o.failPayment) {
        return Result.fail("card_declined", "card declined for " + o.amount.toString() + " (attempt " + sc.attempt.toString() + ")");
      }
      return Result.ok(Value.string("ch-" + o.orderId + "-" + o.amount.toString()));
    },
    { retry: { attempts: 3, backoff: Backoff.Fixed, baseMs: 10 } },
  );
  if (!pay.ok) return compensate(ctx, reservation.value.asString(), pay);
  const shipped = ctx.step("ship-order", o, (sc: StepContext, o: Order): Result => {
    return Result.ok(Value.string("tracking-" + o.orderId));
  });
  if (!shipped.ok) return shipped;
  return Result.ok(Value.object().setString("orderId", o.orderId).setBool("shipped", true).setBool("compensated", false));
}

/** compensate releases the reservation, then fails with cause. */
function compensate(ctx: Context, reservation: string, cause: Result): Result {
  const released = ctx.step("release-inventory", reservation, (sc: StepContext, res: string): Result => {
    sc.log("released " + res);
    return Result.ok(Value.bool(true));
  });
  if (!released.ok) return released;
  return cause;
}
