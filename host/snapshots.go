package host

import (
	"bytes"
	"cmp"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host/snapshot"
)

// Durable snapshots (issue 13, point 2; engine/snapshots.go is the engine's half, and
// host/snapshot the mechanism, with its measurements in host/snapshot/RATIONALE.md).
//
// A module is transformed at load with binaryen's asyncify (in the compile worker, under its
// limits), so that a guest in a call to step_run can unwind its wasm call stack into a buffer
// in its own memory and return out of wfhost_run. When the Handler asks for a checkpoint at a
// step_run (Checkpointer), the host function unwinds instead of answering; Activate then
// copies the guest's memory (as the 4 KiB blocks that differ from its initial memory,
// compressed) and its mutable globals, with the host's own state of the pass (the guest's
// clock, its random stream, the secrets it read, wfhost_run's arguments), hands that to the
// Handler, rewinds the guest into the same call, and the call goes on as if nothing had
// happened. A later activation can start from such a Checkpoint (Activation.Resume): a reset
// instance gets the memory and globals back, is rewound into that step_run, and the Handler
// answers the call as a replay reaching it would. Any failure to restore is ErrRestore, before
// the Handler has been called, so the caller can replay instead.

// SnapshotConfig turns snapshots on and bounds the transform.
type SnapshotConfig struct {
	// WasmOpt is binaryen's wasm-opt, which applies asyncify; "" turns snapshots off (every
	// module then keeps replay).
	WasmOpt string
	// MaxModuleBytes is the largest module transformed; default 2 MiB. A standard Go module
	// (3.6 MB and up) takes a minute of CPU and 450 MB to transform and runs 15-20% slower
	// after (host/snapshot/RATIONALE.md): it keeps replay unless this is raised.
	MaxModuleBytes int
	// Timeout bounds one transform; default 60 s. A module whose transform fails keeps replay.
	Timeout time.Duration
}

// Checkpoint is a guest's whole state at the entry of a step_run call, and the host's state
// of its pass there.
type Checkpoint struct {
	// Code names the exact module code and initial memory the checkpoint is of: a restore
	// needs both the same.
	Code string
	// Data is the encoded state, in the clear: it holds whatever the guest holds.
	Data []byte
	// Secrets reports whether the pass had read a secret (Data then holds its value).
	Secrets bool
}

// Checkpointer is implemented by a Handler that keeps snapshots. At the entry of each
// step_run of a module that can be snapshotted, the host asks WantCheckpoint; when it is
// true the host takes the checkpoint and gives it to Checkpointed before it calls StepRun for
// that same call.
type Checkpointer interface {
	WantCheckpoint() bool
	Checkpointed(Checkpoint)
}

var (
	// ErrRestore is Activate's error when Activation.Resume could not be restored. Nothing of
	// the pass happened: the Handler was not called.
	ErrRestore = errors.New("host: the checkpoint cannot be restored")
	// ErrCheckpoint is Activate's error when a checkpoint the Handler asked for could not be
	// taken (the guest's call stack did not fit the unwind buffer). The Handler had not been
	// called for the step_run it was asked at.
	ErrCheckpoint = errors.New("host: the checkpoint could not be taken")
)

// Snapshots reports whether the module was transformed: its activations can take
// checkpoints and start from them.
func (m *Module) Snapshots() bool { return m.snapshots }

// checkpointMagic starts a Checkpoint's Data; the digit is the format's version.
const checkpointMagic = "WFHCP1\n"

// defaultSnapshotModuleBytes and defaultTransformTimeout are SnapshotConfig's defaults.
const (
	defaultSnapshotModuleBytes = 2 << 20
	defaultTransformTimeout    = time.Minute
)

// transform returns the module's code made snapshottable, or nil when it is not to be: snapshots
// off, the module too large, or the transform failed (logged; the module keeps replay).
func (r *Runtime) transform(ctx context.Context, tenant string, m *Module) []byte {
	sc := r.cfg.Snapshots
	if sc.WasmOpt == "" || len(m.wasm) > cmp.Or(sc.MaxModuleBytes, defaultSnapshotModuleBytes) {
		return nil
	}
	// A restarted daemon finds the module transformed in its cache directory, as it finds its
	// compiled code there: the key is the module and the transform (wasm-opt's version and
	// arguments), so another binaryen transforms again.
	id, err := r.transformID()
	if err != nil {
		r.cfg.Logger.Warn("durable snapshots are off: wasm-opt does not answer", "wasm_opt", sc.WasmOpt, "err", err)
		return nil
	}
	key := sha256.Sum256([]byte(m.Digest + "\x00" + id))
	cached := filepath.Join(r.cacheDir, "asyncify-"+hex.EncodeToString(key[:16])+".wasm")
	if code, err := os.ReadFile(cached); err == nil {
		return code
	}
	leave, err := r.gate.enter(ctx, tenant)
	if err != nil {
		return nil
	}
	defer leave()
	timeout := cmp.Or(sc.Timeout, defaultTransformTimeout)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	began := time.Now()
	// wasm-opt runs under the compile worker, which limits its memory and CPU time first.
	under := append(slices.Clone(r.cfg.CompileWorker),
		"-exec",
		"-data-bytes", strconv.FormatInt(r.cfg.CompileMemoryBytes, 10),
		"-cpu-seconds", strconv.FormatInt(int64(timeout/time.Second)+1, 10))
	code, err := snapshot.Asyncify(tctx, m.wasm, snapshot.Options{WasmOpt: sc.WasmOpt, Under: under})
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Warn("the module cannot be snapshotted; its runs replay their journals", "digest", m.Digest, "err", firstLines(err.Error(), 2))
		}
		return nil
	}
	r.cfg.Logger.Debug("module transformed for snapshots", "digest", m.Digest, "bytes", len(m.wasm), "transformed_bytes", len(code), "took", time.Since(began))
	if tmp, err := os.CreateTemp(r.cacheDir, "asyncify-*.tmp"); err == nil {
		_, werr := tmp.Write(code)
		if cerr := tmp.Close(); werr == nil && cerr == nil {
			_ = os.Rename(tmp.Name(), cached)
		}
		_ = os.Remove(tmp.Name())
	}
	return code
}

// transformID names the transform: wasm-opt's version and the imports it instruments, asked
// once per Runtime.
func (r *Runtime) transformID() (string, error) {
	r.transformOnce.Do(func() {
		ctx, cancel := context.WithTimeout(r.life, 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, r.cfg.Snapshots.WasmOpt, "--version")
		cmd.Env = []string{}
		out, err := cmd.Output()
		if err != nil {
			r.transformErr = err
			return
		}
		r.transformKey = strings.TrimSpace(string(out)) + "\x00" + strings.Join(snapshot.SuspendingImports, ",")
	})
	return r.transformKey, r.transformErr
}

// snapshotCode names a compiled module's code and initial memory for its checkpoints; "" when
// it has no initial image yet (no instance made).
func (c *compiledModule) snapshotCode(m *Module) (string, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil {
		return "", nil
	}
	if c.code == "" {
		h := sha256.New()
		h.Write([]byte(m.codeDigest))
		h.Write(c.snap.memory)
		c.code = "asyncify1:" + hex.EncodeToString(h.Sum(nil))
	}
	return c.code, c.snap.memory
}

// unwindsFor is called at the top of every host function asyncify instruments
// (snapshotImports): it reports whether the call is to unwind the guest for a checkpoint
// instead of being answered. A call a rewind returns into ends the rewind and is answered like
// any other.
func (st *state) unwindsFor(ctx context.Context, name string) bool {
	resumed, err := st.snap.Resuming(ctx)
	if err != nil {
		st.stop(fmt.Errorf("%w: %v", ErrRestore, err))
	}
	if resumed || name != abi.FuncStepRun || st.checkpointer == nil || st.inStep || st.result != nil {
		return false
	}
	if !st.checkpointer.WantCheckpoint() {
		return false
	}
	if err := st.snap.Suspend(ctx); err != nil {
		// No room for the unwind buffer under the memory limit: the pass goes on without.
		st.logger.Debug("checkpoint not taken", "err", err)
		return false
	}
	st.checkpointing = true
	return true
}

// snapshotImports are the host functions asyncify instruments (snapshot.SuspendingImports).
var snapshotImports = func() map[string]bool {
	out := map[string]bool{}
	for _, f := range snapshot.SuspendingImports {
		out[f[len(abi.ImportModule)+1:]] = true
	}
	return out
}()

// checkpoint captures the guest that a step_run unwound (unwindsFor), hands the Checkpoint to
// the Handler and rewinds the guest into the same call, for wfhost_run to be called again with
// args.
func (st *state) checkpoint(ctx context.Context, code string, base []byte, args []uint64) error {
	st.checkpointing = false
	if _, err := st.snap.Suspended(ctx); err != nil {
		return err
	}
	st.stdout.flush()
	st.stderr.flush()
	var buf bytes.Buffer
	if err := st.encodePassState(&buf, args); err != nil {
		return err
	}
	if err := st.snap.CaptureTo(&buf, base, flate.BestSpeed); err != nil {
		return err
	}
	st.checkpointer.Checkpointed(Checkpoint{Code: code, Data: buf.Bytes(), Secrets: len(st.secrets) > 0})
	return st.snap.Continue(ctx)
}

// encodePassState writes what of the pass lives in the host rather than in the guest's memory.
func (st *state) encodePassState(buf *bytes.Buffer, args []uint64) error {
	random, err := st.random.MarshalBinary()
	if err != nil {
		return err
	}
	b := append([]byte(nil), checkpointMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(args)))
	for _, a := range args {
		b = binary.LittleEndian.AppendUint64(b, a)
	}
	clock := int64(0)
	if !st.clock.IsZero() {
		clock = st.clock.UnixNano()
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(clock))
	b = appendBytes(b, random)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(st.secrets)))
	for _, s := range st.secrets {
		b = appendBytes(b, s)
	}
	buf.Write(b)
	return nil
}

func appendBytes(b, v []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// restore puts a Checkpoint into the activation: the host's pass state into st, and the
// guest's memory and globals into its instance, whose memory is still base, and starts the
// rewind. It returns wfhost_run's arguments of the pass the checkpoint was taken in.
func (st *state) restore(ctx context.Context, data, base []byte) ([]uint64, error) {
	d := snapshot.NewDecoder(data)
	if string(d.Next(len(checkpointMagic))) != checkpointMagic {
		return nil, errors.New("not a checkpoint")
	}
	n := d.U32()
	if n > 8 {
		return nil, fmt.Errorf("%d arguments", n)
	}
	args := make([]uint64, n)
	for i := range args {
		args[i] = d.U64()
	}
	clock := int64(d.U64())
	random := d.Bytes()
	ns := int(d.U32())
	if ns > len(d.Rest())/4 {
		return nil, errors.New("checkpoint truncated")
	}
	secrets := make([][]byte, ns)
	for i := range secrets {
		secrets[i] = bytes.Clone(d.Bytes())
	}
	if d.Err() != nil {
		return nil, fmt.Errorf("checkpoint: %w", d.Err())
	}
	if err := st.random.UnmarshalBinary(random); err != nil {
		return nil, fmt.Errorf("random stream: %w", err)
	}
	if clock != 0 {
		st.clock = time.Unix(0, clock).UTC()
	}
	st.secrets, st.redactions = secrets, nil
	if err := st.snap.RestoreFrom(ctx, bytes.NewReader(d.Rest()), base); err != nil {
		return nil, err
	}
	return args, nil
}
