package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/store"
)

// Durable snapshots (issue 13, point 2). A module the host transformed (host/snapshots.go)
// can checkpoint its guest at a step_run: every Config.SnapshotEvery journal entries of new
// progress, a pass asks for one (WantCheckpoint) and writes it, with the engine's own pass
// state (the step keys reached, the guest's clock), in the same fenced commit as the journal
// entry before it (store.SaveSnapshot, at that step_run's flush). The store keeps one per
// run. A claim of a run with a snapshot reads the journal only from the snapshot on; the
// activation restores the guest into that step_run, where the pass answers it as a replay
// reaching it would. So a recovery (after a crash, an eviction, a restart) replays at most
// SnapshotEvery entries, not the whole journal.
//
// Nothing depends on it: a snapshot of other code (a redeploy, another binaryen, a host
// without wasm-opt), one this host cannot open, or one the host fails to restore sends the
// activation back to the journal's start (its first page, store.JournalPage) before the guest has run. A
// run whose checkpoint could not be taken here (its call stack past the unwind buffer) takes
// none on this host again. A claim hands a snapshot over only while the journal still has the
// entry it was taken after with the same key (store.Snapshot.LastKey, checked by the store in
// the claim's journal read, which deletes a snapshot that fails it): one whose journal was cut
// back or rewritten under it never reaches the engine, and the run replays from the top.
//
// An image holds whatever the guest holds, the secrets it read included: with a keyring
// (Config.SecretKeys) every snapshot is sealed under it, bound to its run; without one a
// snapshot is stored as it is (it holds nothing the journal does not, its inputs and step
// results) unless the pass read a secret, which is then never written.

// snapshots is the engine's snapshot policy. Safe for concurrent use.
type snapshots struct {
	every int
	keys  *envelope.Keyring
	obs   *observer
	mu    sync.Mutex
	// off are the runs whose checkpoint failed on this host (ErrCheckpoint): they take none
	// here again. Bounded: cleared when it reaches maxSnapshotsOff.
	off map[string]bool
}

const maxSnapshotsOff = 10_000

func newSnapshots(every int, keys *envelope.Keyring, obs *observer) *snapshots {
	if every <= 0 {
		return nil
	}
	return &snapshots{every: every, keys: keys, obs: obs, off: map[string]bool{}}
}

func (s *snapshots) takesFor(runID string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.off[runID]
}

// failed stops snapshots of runID on this host.
func (s *snapshots) failed(runID string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.off) >= maxSnapshotsOff {
		clear(s.off)
	}
	s.off[runID] = true
}

// passSnapshots is one pass's: where its latest snapshot is, and the one waiting to be
// written with the next flush.
type passSnapshots struct {
	*snapshots
	lastSeq int // the journal entry the latest snapshot was taken at (0: none)
}

// snapState is the engine's pass state a snapshot holds beside the host's.
type snapState struct {
	Seen  map[string]int `json:"seen"`
	Clock time.Time      `json:"clock"`
}

// Snapshot data formats: the first byte says whether the rest is sealed.
const (
	snapPlain  = 1
	snapSealed = 2
)

// encode is a snapshot's Data: the engine's state and the host's checkpoint, sealed when
// there is a keyring.
func (s *snapshots) encode(runID string, st snapState, cp host.Checkpoint) ([]byte, error) {
	meta, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	// The format byte first, so the plain form is the buffer as it is, with no copy.
	buf := make([]byte, 1, 1+4+len(meta)+len(cp.Data))
	buf[0] = snapPlain
	buf = appendField(buf, meta)
	buf = append(buf, cp.Data...)
	if s.keys == nil {
		return buf, nil
	}
	sealed, err := s.keys.Seal(buf[1:], snapshotContext(runID))
	if err != nil {
		return nil, err
	}
	out := []byte{snapSealed}
	out = appendField(out, []byte(sealed.KeyID))
	out = appendField(out, sealed.DataKey)
	return append(out, sealed.Ciphertext...), nil
}

// decode opens a snapshot's Data.
func (s *snapshots) decode(runID string, data []byte) (snapState, []byte, error) {
	var st snapState
	if len(data) == 0 {
		return st, nil, errors.New("empty snapshot")
	}
	plain := data[1:]
	switch data[0] {
	case snapPlain:
	case snapSealed:
		if s.keys == nil {
			return st, nil, errors.New("the snapshot is sealed and this host has no keyring")
		}
		keyID, rest, ok := cutField(plain)
		dataKey, ciphertext, ok2 := cutField(rest)
		if !ok || !ok2 {
			return st, nil, errors.New("snapshot truncated")
		}
		var err error
		plain, err = s.keys.Open(envelope.Sealed{KeyID: string(keyID), DataKey: dataKey, Ciphertext: ciphertext}, snapshotContext(runID))
		if err != nil {
			return st, nil, err
		}
	default:
		return st, nil, fmt.Errorf("snapshot format %d", data[0])
	}
	meta, rest, ok := cutField(plain)
	if !ok {
		return st, nil, errors.New("snapshot truncated")
	}
	if err := json.Unmarshal(meta, &st); err != nil {
		return st, nil, fmt.Errorf("snapshot state: %w", err)
	}
	return st, rest, nil
}

// snapshotContext binds a sealed snapshot to its run: one moved to another run's row does
// not open.
func snapshotContext(runID string) []byte { return []byte("wfhost-snapshot/" + runID) }

func appendField(b, v []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

func cutField(b []byte) (field, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n], b[4+n:], true
}

// WantCheckpoint asks for a snapshot at a step_run that makes new progress (the journal has
// nothing at the cursor) SnapshotEvery entries or more after the latest.
func (p *pass) WantCheckpoint() bool {
	s := p.snaps
	if s == nil || p.inStep != nil || p.j.snapshotRefused || p.j.replaying() {
		return false
	}
	return p.j.cursor-s.lastSeq >= s.every && s.takesFor(p.run.ID)
}

// Checkpointed keeps the snapshot taken at the entry of this step_run, with the pass's state
// there, to be written with the step before it (journal.flush).
func (p *pass) Checkpointed(cp host.Checkpoint) {
	s := p.snaps
	if s == nil {
		return
	}
	// Whether it is kept or not, the next is asked for SnapshotEvery entries on.
	s.lastSeq = p.j.cursor
	if cp.Secrets && s.keys == nil {
		return // a secret is never stored in the clear
	}
	data, err := s.encode(p.run.ID, snapState{Seen: p.seen, Clock: p.clock}, cp)
	if err != nil {
		p.log.Warn("snapshot not kept", "err", err)
		return
	}
	p.j.snapshot = &store.Snapshot{RunID: p.run.ID, Seq: p.j.cursor, LastKey: p.lastKey, Code: cp.Code, Data: data}
	s.obs.snapshotTaken(len(data))
}

// resumeFrom is the checkpoint the claim's snapshot holds, with the pass put where that
// checkpoint's call finds the journal; nil when there is none this host can use (the caller
// then reads the journal's start: replayFromTop).
func (p *pass) resumeFrom(c store.Claim, mod *host.Module) *host.Checkpoint {
	if c.Snapshot == nil || p.snaps == nil || !mod.Snapshots() {
		return nil
	}
	st, data, err := p.snaps.decode(c.Run.ID, c.Snapshot.Data)
	if err != nil {
		p.log.Warn("snapshot not opened; replaying the journal", "err", err)
		return nil
	}
	p.seen, p.clock, p.lastKey = st.Seen, st.Clock, c.Snapshot.LastKey
	if p.seen == nil {
		p.seen = map[string]int{}
	}
	// The journal's cursor is at c.JournalFrom already (newJournal).
	p.snaps.lastSeq = c.Snapshot.Seq
	return &host.Checkpoint{Code: c.Snapshot.Code, Data: data}
}
