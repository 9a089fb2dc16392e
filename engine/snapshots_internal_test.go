package engine

import (
	"bytes"
	"testing"
	"time"

	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/internal/testenv"
)

// A snapshot's data opens for its own run only, and is sealed when there is a keyring: the
// image holds what the guest holds, secrets included.
func TestSnapshotDataIsSealedAndBoundToItsRun(t *testing.T) {
	st := snapState{Seen: map[string]int{"s": 3, "pause": 2}, Clock: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)}
	cp := host.Checkpoint{Code: "c", Data: []byte("the guest's memory, with sk_live_0123456789 in it")}
	for _, keyed := range []bool{true, false} {
		var keys *envelope.Keyring
		if keyed {
			keys = testenv.SecretKeys(t)
		}
		s := newSnapshots(10, keys, nil)
		data, err := s.encode("run-a", st, cp)
		if err != nil {
			t.Fatal(err)
		}
		if keyed && bytes.Contains(data, []byte("sk_live")) {
			t.Fatal("a sealed snapshot holds the guest's memory in the clear")
		}
		got, image, err := s.decode("run-a", data)
		if err != nil {
			t.Fatalf("keyed=%v: %v", keyed, err)
		}
		if !bytes.Equal(image, cp.Data) || got.Seen["s"] != 3 || got.Seen["pause"] != 2 || !got.Clock.Equal(st.Clock) {
			t.Fatalf("keyed=%v: decoded %+v %q", keyed, got, image)
		}
		if keyed {
			if _, _, err := s.decode("run-b", data); err == nil {
				t.Fatal("a sealed snapshot opened for another run")
			}
			if _, _, err := newSnapshots(10, nil, nil).decode("run-a", data); err == nil {
				t.Fatal("a sealed snapshot opened without the keyring")
			}
		}
		cuts := []int{0, 1, 3}
		if keyed {
			cuts = append(cuts, len(data)/2, len(data)-1) // the seal sees any cut (the host checks a plain image's)
		}
		for _, n := range cuts {
			if _, _, err := s.decode("run-a", data[:n]); err == nil {
				t.Fatalf("keyed=%v: %d bytes of %d decoded", keyed, n, len(data))
			}
		}
	}
}
