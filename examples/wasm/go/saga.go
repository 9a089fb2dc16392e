package main

import (
	"fmt"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type order struct {
	OrderID     string `json:"orderId"`
	Amount      int    `json:"amount"`
	FailPayment bool   `json:"failPayment"`
	HoldMs      int64  `json:"holdMs"` // hold the reservation this long before the charge
}

type orderResult struct {
	OrderID     string `json:"orderId"`
	Shipped     bool   `json:"shipped"`
	Compensated bool   `json:"compensated"`
	Reason      string `json:"reason,omitempty"`
}

func init() {
	wf.Register(wf.Workflow[order, orderResult]{
		Name: "order-saga", Version: "1", RetentionDays: 90,
		Run: orderSaga,
	})
}

// orderSaga reserves stock, holds it for holdMs, charges the card and ships. When the charge
// fails for good, or the run is cancelled before it (abi/ABI.md §4.15), it releases the
// reservation (the compensation) and fails with the payment's error or the cancellation.
func orderSaga(ctx *wf.Context, o order) (orderResult, error) {
	reservation, err := wf.Step(ctx, "reserve-inventory", func(sc *wf.StepContext) (string, error) {
		return "res-" + o.OrderID, nil
	})
	if err != nil {
		return orderResult{}, err
	}
	compensate := func(cause error) (orderResult, error) {
		if _, err := wf.Step(ctx, "release-inventory", func(sc *wf.StepContext) (bool, error) {
			wf.Log(ctx, "released %s", reservation)
			return true, nil
		}); err != nil {
			return orderResult{}, err
		}
		return orderResult{}, cause
	}
	if o.HoldMs > 0 {
		if err := wf.Sleep(ctx, "hold", time.Duration(o.HoldMs)*time.Millisecond); err != nil {
			return compensate(err)
		}
	}
	_, payErr := wf.Step(ctx, "charge-payment", func(sc *wf.StepContext) (string, error) {
		if o.FailPayment {
			return "", wf.NewError("card_declined", "card declined for %d (attempt %d)", o.Amount, sc.Attempt)
		}
		return fmt.Sprintf("ch-%s-%d", o.OrderID, o.Amount), nil
	}, wf.WithRetry(wf.RetryPolicy{Attempts: 3, Backoff: "fixed", Base: 10 * time.Millisecond}))
	if payErr != nil {
		return compensate(payErr)
	}
	if _, err := wf.Step(ctx, "ship-order", func(sc *wf.StepContext) (string, error) {
		return "tracking-" + o.OrderID, nil
	}); err != nil {
		return orderResult{}, err
	}
	return orderResult{OrderID: o.OrderID, Shipped: true}, nil
}
