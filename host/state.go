package host

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host/snapshot"
)

// state is what the host functions of one instance share. Only the goroutine calling into the
// instance touches it, so it needs no lock.
type state struct {
	handler Handler // nil while Load describes a module
	limits  Limits
	logger  *slog.Logger

	inStep  bool          // a step callback is running: real clock and randomness
	attempt *attemptTimer // the running callback's timeout, if its step has one (attempts.go)
	sends   int           // the running callback's event_send calls so far (events.go)
	// interrupted is set when the guest was stopped mid-callback (attempts.go): its instance
	// is not kept.
	interrupted bool
	pending     []byte // reply data waiting for take
	hasPend     bool

	result *Result // set by complete or fail
	// branched is set when parallel_run answered StatusBranch: the pass is a branch's, to be
	// ended by branch_done.
	branched bool
	// branchEnded is set by branch_done, which ends the pass by unwinding the guest.
	branchEnded bool
	fault       *GuestError   // the guest broke the ABI; the pass ends with it
	abort       error         // a Handler error that unwound the guest
	clock       time.Time     // last time the guest read, so its clock never runs backwards
	random      *rand.ChaCha8 // the deterministic stream outside callbacks

	stdout, stderr *lineLogger

	// core is the tenant's core the guest's code holds while it runs (cores.go).
	core onCore
	// wall is the pass's (or describe's) deadline, paused while the guest waits for a core
	// or is parked.
	wall *wallClock
	// memoryBytes is the size of the instance's linear memory, for what parking it costs.
	memoryBytes func() uint64

	outbound *Outbound // nil: no outbound HTTP
	// secrets are the values the host handed this instance (secret_get), redacted from all
	// it writes (redact.go). They belong with the instance's memory: today both start empty
	// at every activation; an instance ever kept past one would have to keep its set.
	secrets    [][]byte
	redactions *redactSet // secrets prepared for matching, rebuilt when one is added

	// snap is the instance's asyncify exports when this pass may take checkpoints or starts
	// from one (snapshots.go); checkpointer is the Handler's, when it takes them;
	// checkpointing is set while a step_run unwinds the guest for one.
	snap          *snapshot.Guest
	checkpointer  Checkpointer
	checkpointing bool

	// done ends a sleep inside a step callback when the activation is cancelled or times out;
	// guest is the context it is done with, the one of the calls into the guest.
	done  <-chan struct{}
	guest context.Context
}

var describeTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

type stateKey struct{}

func withState(ctx context.Context, st *state) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}

func newDescribeState() *state {
	st := &state{logger: slog.New(slog.DiscardHandler), limits: DefaultLimits()}
	st.random = rand.NewChaCha8([32]byte{})
	st.stdout = newLineLogger(st, slog.LevelInfo, "stdout")
	st.stderr = newLineLogger(st, slog.LevelWarn, "stderr")
	return st
}

func newActivationState(a Activation) *state {
	st := &state{handler: a.Handler, limits: a.Limits, logger: a.Logger, outbound: a.Outbound}
	if st.logger == nil {
		st.logger = slog.New(slog.DiscardHandler)
	}
	// Seeded from the run id: every pass of a run draws the same bytes outside callbacks, so Go's
	// map order, math/rand and crypto/rand read there replay identically.
	st.random = rand.NewChaCha8(sha256.Sum256([]byte("wfhost-run/" + a.RunID)))
	st.stdout = newLineLogger(st, slog.LevelInfo, "stdout")
	st.stderr = newLineLogger(st, slog.LevelWarn, "stderr")
	return st
}

// moduleConfig gives the instance its clock, random source and output, all through this state.
func (st *state) moduleConfig() wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithName("").
		// _initialize is called explicitly, so a trap in it is reported like any other.
		WithStartFunctions().
		WithStdout(st.stdout).
		WithStderr(st.stderr).
		WithWalltime(st.walltime, sys.ClockResolution(1000)).
		WithNanotime(st.nanotime, sys.ClockResolution(1000)).
		WithRandSource(randSource{st}).
		WithNanosleep(st.nanosleep)
}

// nanosleep is the guest's sleep: real inside a step callback (a step may pace its calls),
// and a no-op outside, where waiting belongs to durable sleeps and the clock does not move.
func (st *state) nanosleep(ns int64) {
	if !st.inStep || ns <= 0 {
		return
	}
	// A sleeping guest computes nothing: its core is its tenant's meanwhile (cores.go).
	st.core.give()
	defer st.backOnCore(st.guest)
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-st.done:
	}
}

// now is the guest's clock: outside a callback the journal's time, inside real time, truncated
// to microseconds as the journal keeps it, and never earlier than a time already read.
func (st *state) now() time.Time {
	var t time.Time
	switch {
	case st.handler == nil:
		// Describe runs no workflow: any fixed time will do, except zero, which Go's runtime
		// refuses as a monotonic clock.
		t = describeTime
	case st.inStep:
		t = time.Now().Truncate(time.Microsecond)
	default:
		t = st.handler.Now()
	}
	if t.Before(st.clock) {
		t = st.clock
	}
	st.clock = t
	return t
}

func (st *state) walltime() (int64, int32) {
	t := st.now()
	return t.Unix(), int32(t.Nanosecond())
}

func (st *state) nanotime() int64 { return st.now().UnixNano() }

// randSource is the guest's random_get: deterministic outside callbacks, real inside.
type randSource struct{ st *state }

func (r randSource) Read(p []byte) (int, error) {
	if r.st.inStep {
		return crand.Read(p)
	}
	return r.st.random.Read(p)
}

var _ io.Reader = randSource{}

func (st *state) stderrTail() string {
	if tail := st.stderr.tail(); tail != "" {
		return "; guest stderr: " + tail
	}
	return ""
}

// lineLogger turns guest output into log records, one per line, each bounded; it remembers the
// last lines so a trap's error can say what the guest printed before dying.
type lineLogger struct {
	attrs  func() []any
	text   func(b []byte, limit int) string // the storable, redacted, cut text of a line
	logger *slog.Logger
	level  slog.Level
	stream string
	line   []byte
	first  []string // the first lines: a Go runtime puts the reason of a fatal error there
	last   []string
	trace  stackTrace // the lines of a stack trace being gathered into one record (guestlines.go)
}

const (
	maxLineBytes = 4 << 10
	// keptLineBytes is how much of a line is kept until it ends: past the cut at maxLineBytes,
	// as much again as the longest secret, so a secret that crosses the cut is whole when the
	// line is redacted, and only then cut.
	keptLineBytes = maxLineBytes + abi.MaxSecretBytes
	keepLines     = 8
	maxTailBytes  = 2 << 10
)

func newLineLogger(st *state, level slog.Level, stream string) *lineLogger {
	return &lineLogger{attrs: st.logAttrs, text: st.storableText, logger: st.logger, level: level, stream: stream}
}

func (w *lineLogger) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := keptLineBytes - len(w.line); room > 0 {
			w.line = append(w.line, chunk[:min(len(chunk), room)]...)
		}
		if i < 0 {
			break
		}
		w.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// logAttrs mark a guest's record as the guest's, with the step it came from.
func (st *state) logAttrs() []any {
	attrs := []any{"source", "guest"}
	if st.inStep && st.handler != nil {
		attrs = append(attrs, "step", st.handler.CurrentStep())
	}
	return attrs
}

// flush logs what the guest wrote so far: a line not ended yet, and a stack trace gathered.
func (w *lineLogger) flush() {
	w.endLine()
	w.emitTrace()
}

// endLine logs the line written so far, or adds it to the stack trace being gathered.
func (w *lineLogger) endLine() {
	if len(w.line) == 0 {
		return
	}
	s := w.text(w.line, maxLineBytes)
	w.line = w.line[:0]
	w.record(s)
	if len(w.first) < keepLines/2 {
		w.first = append(w.first, s)
		return
	}
	w.last = append(w.last, s)
	if len(w.last) > keepLines {
		w.last = w.last[1:]
	}
}

func (w *lineLogger) tail() string {
	w.flush()
	head := strings.Join(w.first, " | ")
	if len(head) > maxTailBytes/2 {
		head = head[:maxTailBytes/2]
	}
	tail := strings.Join(w.last, " | ")
	if len(tail) > maxTailBytes/2 {
		tail = tail[len(tail)-maxTailBytes/2:]
	}
	if tail == "" {
		return head
	}
	return head + " | ... | " + tail
}
