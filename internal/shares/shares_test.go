package shares_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/shares"
)

func TestATenantAloneIsNotBounded(t *testing.T) {
	p := shares.New(1, time.Hour)
	a := p.Join("a")
	for range 5 {
		if !p.TryHold(a) {
			t.Fatal("a tenant alone was refused a token")
		}
	}
	if n := p.Held("a"); n != 5 {
		t.Fatalf("held %d, want 5", n)
	}
}

func TestAnotherTenantAboutBoundsTheShareAndWaitersGoInOrder(t *testing.T) {
	p := shares.New(2, time.Hour)
	a, b := p.Join("a"), p.Join("b")
	defer p.Leave(b)
	if !p.TryHold(a) || !p.TryHold(a) {
		t.Fatal("a was refused its share")
	}
	if p.TryHold(a) {
		t.Fatal("a took more than its share while b was about")
	}
	if !p.TryHold(b) {
		t.Fatal("b was refused its share")
	}
	got := make(chan int, 2)
	for i := range 2 {
		go func() {
			if err := p.Hold(context.Background(), a); err == nil {
				got <- i
			}
		}()
		// The second waiter queues after the first.
		for p.Waiting("a") < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	if p.TryHold(a) {
		t.Fatal("a took a token past its waiters")
	}
	p.Let(a)
	if first := <-got; first != 0 {
		t.Fatalf("waiter %d was served first, want 0", first)
	}
	p.Let(a)
	if second := <-got; second != 1 {
		t.Fatalf("waiter %d was served second, want 1", second)
	}
}

func TestAHoldEndsWithItsContextAndLeavesNoToken(t *testing.T) {
	p := shares.New(1, time.Hour)
	a, b := p.Join("a"), p.Join("b")
	defer p.Leave(b)
	if !p.TryHold(a) {
		t.Fatal("a was refused its share")
	}
	cause := errors.New("caller gone")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if err := p.Hold(ctx, a); !errors.Is(err, cause) {
		t.Fatalf("Hold = %v, want the context's cause", err)
	}
	if n := p.Held("a"); n != 1 {
		t.Fatalf("held %d after a cancelled Hold, want 1", n)
	}
}

func TestATenantGoneForTheWindowNoLongerCounts(t *testing.T) {
	p := shares.New(1, 0)
	a, b := p.Join("a"), p.Join("b")
	if !p.TryHold(b) {
		t.Fatal("b was refused")
	}
	p.Let(b)
	if !p.TryHold(a) {
		t.Fatal("a was refused its share")
	}
	if p.TryHold(a) {
		t.Fatal("a went past its share while b had joined")
	}
	p.Leave(b)
	if !p.TryHold(a) {
		t.Fatal("a stayed bounded after b left and its window was over")
	}
}

// TestHoldForNeedsNoJoin: HoldFor takes a token for a tenant nobody joined, bounded by its
// share while another tenant is about, and the token it holds counts it as about without a
// Join (Joined stays 0: joins count only what joined).
func TestHoldForNeedsNoJoin(t *testing.T) {
	p := shares.New(1, time.Hour)
	b := p.Join("b")
	defer p.Leave(b)
	a, err := p.HoldFor(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Joined("a"); n != 0 {
		t.Fatalf("a joined %d times, want 0", n)
	}
	// a's token makes a about: b is bounded by its share too.
	if !p.TryHold(b) {
		t.Fatal("b was refused its share")
	}
	if p.TryHold(b) {
		t.Fatal("b took past its share while a held a token")
	}
	p.Let(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.HoldFor(ctx, "a"); err == nil {
		t.Fatal("a took a second token while b was about")
	}
	p.Let(a)
	if n := p.Held("a"); n != 0 {
		t.Fatalf("a holds %d after Let, want 0", n)
	}
	if n := p.Joined("b"); n != 1 {
		t.Fatalf("b joined %d times, want 1", n)
	}
}
