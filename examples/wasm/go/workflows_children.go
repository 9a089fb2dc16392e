package main

import (
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// The parent and child workflows (abi/ABI.md §4.16): a parent that starts an audit child it
// does not wait for, then awaits a child that squares a number, and compensates when that
// child fails or the parent is cancelled while it waits.

type childInput struct {
	N      int   `json:"n"`
	Fail   bool  `json:"fail"`
	HoldMs int64 `json:"holdMs"` // wait this long before answering (a child to cancel)
}

type childResult struct {
	Square int `json:"square"`
}

type parentInput struct {
	N         int   `json:"n"`
	FailChild bool  `json:"failChild"`
	HoldMs    int64 `json:"holdMs"`
	Audit     bool  `json:"audit"` // also start a detached audit child
}

type parentResult struct {
	Square  int  `json:"square"`
	Audited bool `json:"audited"`
}

func init() {
	wf.Register(wf.Workflow[childInput, childResult]{Name: "child", Version: "1", Run: child})
	wf.Register(wf.Workflow[parentInput, parentResult]{Name: "parent", Version: "1", Run: parent})
}

// child squares n, after holding for holdMs; with fail it fails for good after the square.
func child(ctx *wf.Context, in childInput) (childResult, error) {
	sq, err := wf.Step(ctx, "square", func(sc *wf.StepContext) (int, error) { return in.N * in.N, nil })
	if err != nil {
		return childResult{}, err
	}
	if in.HoldMs > 0 {
		if err := wf.Sleep(ctx, "hold", time.Duration(in.HoldMs)*time.Millisecond); err != nil {
			return childResult{}, err
		}
	}
	if in.Fail {
		if _, err := wf.Step(ctx, "explode", func(sc *wf.StepContext) (int, error) {
			return 0, wf.NonRetryable(wf.NewError("child_boom", "the child failed on %d", in.N))
		}); err != nil {
			return childResult{}, err
		}
	}
	return childResult{Square: sq}, nil
}

// parent starts the audit child (detached, with an id of its own) when asked, awaits the
// square child, and compensates when that child fails or this run is cancelled meanwhile.
func parent(ctx *wf.Context, in parentInput) (parentResult, error) {
	if in.Audit {
		if _, err := wf.StartChild(ctx, "audit", "child", childInput{N: 1}, wf.ChildID("audit-of-square")); err != nil {
			return parentResult{}, err
		}
	}
	res, err := wf.RunChild[childResult](ctx, "square", "child", childInput{N: in.N, Fail: in.FailChild, HoldMs: in.HoldMs})
	if err != nil {
		if _, cerr := wf.Step(ctx, "compensate", func(sc *wf.StepContext) (bool, error) { return true, nil }); cerr != nil {
			return parentResult{}, cerr
		}
		return parentResult{}, err
	}
	return parentResult{Square: res.Square, Audited: in.Audit}, nil
}
