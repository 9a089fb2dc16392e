package journals

import (
	"testing"

	"github.com/wfhost/wfhost/store"
)

func TestLimitAndTrim(t *testing.T) {
	if _, ok := Limit(0); ok {
		t.Fatal("a window of 0 has a limit")
	}
	if l, ok := Limit(3); !ok || l != 4 {
		t.Fatalf("Limit(3) = %d, %v; want one more than the window", l, ok)
	}
	if l, _ := Limit(1 << 62); l != MaxWindow+1 {
		t.Fatalf("Limit of a huge window = %d, want MaxWindow+1", l)
	}
	steps := make([]store.Step, 4)
	for _, tc := range []struct {
		window, n int
		more      bool
	}{{0, 4, false}, {3, 3, true}, {4, 4, false}, {9, 4, false}} {
		got, more := Trim(steps, tc.window)
		if len(got) != tc.n || more != tc.more {
			t.Errorf("Trim(4 entries, %d) = %d entries, more %v; want %d, %v", tc.window, len(got), more, tc.n, tc.more)
		}
	}
}
