package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tetratelabs/wazero/api"
)

// Asyncify's states, as asyncify_get_state reports them.
const (
	stateNormal    = 0
	stateUnwinding = 1
	stateRewinding = 2
)

const pageSize = 64 << 10

// DefaultBufferSize is the size of the unwind buffer ReserveBuffer makes by default: the saved
// locals of every frame between wfhost_run and the suspending call. An AssemblyScript or Rust
// workflow suspended in the SDK's sleep needs a few hundred bytes.
const DefaultBufferSize = pageSize

// Guest is one instance of a module Transform made, with the asyncify exports and the mutable
// globals it needs to unwind, capture, restore and rewind. Like the instance it wraps, it is
// not safe for concurrent use: only the goroutine calling into the instance may use it,
// including from inside a host function that goroutine is running.
type Guest struct {
	mod     api.Module
	globals []api.MutableGlobal

	startUnwind, stopUnwind, startRewind, stopRewind, getState api.Function

	buf, bufSize uint32 // the unwind buffer, in guest memory
	// transient: the buffer is grown at the end of memory when a suspension needs it and
	// zeroed once a rewind is done with it (TransientBuffer).
	transient bool
	unwinding bool // Suspend started an unwind that Suspended has not yet ended
	rewinding bool // Restore started a rewind that Resuming has not yet ended
}

// NewGuest wraps an instance of a transformed module; globals are the names Transform
// returned.
func NewGuest(mod api.Module, globals []string) (*Guest, error) {
	g := &Guest{mod: mod}
	for _, f := range []struct {
		name string
		fn   *api.Function
	}{
		{"asyncify_start_unwind", &g.startUnwind},
		{"asyncify_stop_unwind", &g.stopUnwind},
		{"asyncify_start_rewind", &g.startRewind},
		{"asyncify_stop_rewind", &g.stopRewind},
		{"asyncify_get_state", &g.getState},
	} {
		if *f.fn = mod.ExportedFunction(f.name); *f.fn == nil {
			return nil, fmt.Errorf("snapshot: the module does not export %s: not transformed", f.name)
		}
	}
	for _, name := range globals {
		mg, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return nil, fmt.Errorf("snapshot: %s is not an exported mutable global", name)
		}
		g.globals = append(g.globals, mg)
	}
	if mod.Memory() == nil {
		return nil, errors.New("snapshot: the module has no memory")
	}
	return g, nil
}

// Module is the wrapped instance.
func (g *Guest) Module() api.Module { return g.mod }

// ReserveBuffer makes the unwind buffer: size bytes at the start of pages grown past the end
// of the guest's memory for it, before the first call into the workflow. The guest's own
// allocator never hands these bytes out: AssemblyScript's and Rust's allocators take new memory
// from where memory.grow says it begins. (Go's runtime assumes it owns every page up to the end
// of memory and would not leave it alone: see RATIONALE.md.)
func (g *Guest) ReserveBuffer(size uint32) error {
	if size == 0 {
		size = DefaultBufferSize
	}
	pages := (size + pageSize - 1) / pageSize
	before, ok := g.mod.Memory().Grow(pages)
	if !ok {
		return fmt.Errorf("snapshot: cannot grow memory by %d pages for the unwind buffer", pages)
	}
	g.buf, g.bufSize = before*pageSize, size
	return nil
}

// TransientBuffer makes the unwind buffer size bytes (rounded up to pages) grown at the end of
// memory by each Suspend that needs it (one whose previous buffer is no longer the end of
// memory), and zeroed by Resuming once the rewind is done with it. This is for runtimes whose
// allocator assumes it owns every page up to the end of memory and that memory it grows is
// zero (Go's sbrk, TinyGo's heap): they may take the buffer's pages when they next grow, which
// is harmless once the stack is back on the wasm stack and the pages are zero again.
func (g *Guest) TransientBuffer(size uint32) {
	if size == 0 {
		size = DefaultBufferSize
	}
	g.transient, g.bufSize, g.buf = true, (size+pageSize-1)/pageSize*pageSize, 0
}

// Suspend starts unwinding the guest's stack. It is called from inside a host function that
// asyncify instruments (SuspendingImports), instead of aborting the guest: when the host
// function returns (its result is ignored), the guest saves its frames into the buffer and
// returns from every function up to the export the host called, which then returns normally;
// the host then calls Suspended and Capture.
func (g *Guest) Suspend(ctx context.Context) error {
	if g.bufSize == 0 {
		return errors.New("snapshot: no unwind buffer (ReserveBuffer)")
	}
	mem := g.mod.Memory()
	if g.transient && (g.buf == 0 || mem.Size() != g.buf+g.bufSize) {
		before, ok := mem.Grow(g.bufSize / pageSize)
		if !ok {
			return fmt.Errorf("snapshot: cannot grow memory by %d bytes for the unwind buffer", g.bufSize)
		}
		g.buf = before * pageSize
	}
	// The buffer's header: where the next frame goes, and where the buffer ends.
	if !mem.WriteUint32Le(g.buf, g.buf+8) || !mem.WriteUint32Le(g.buf+4, g.buf+g.bufSize) {
		return errors.New("snapshot: the unwind buffer is outside memory")
	}
	if _, err := g.startUnwind.Call(ctx, api.EncodeU32(g.buf)); err != nil {
		return fmt.Errorf("snapshot: start unwind: %w", err)
	}
	g.unwinding = true
	return nil
}

// Suspended is called once the export returned: it reports whether the guest unwound (rather
// than finishing), and if it did, ends the unwind so that the instance is quiescent and its
// memory and globals are the whole of its state. It fails when the saved stack did not fit the
// buffer: asyncify checks only here, after writing past the buffer's end, so the instance's
// memory may be damaged and it must be discarded (the run is then replayed, from the top or
// from its latest image).
func (g *Guest) Suspended(ctx context.Context) (bool, error) {
	if !g.unwinding {
		return false, nil
	}
	g.unwinding = false
	if _, err := g.stopUnwind.Call(ctx); err != nil {
		return false, fmt.Errorf("snapshot: stop unwind: %w", err)
	}
	return true, nil
}

// Resuming is called at the top of every suspending host function. It reports whether this call
// is the one a rewind is returning into (the call that suspended, made again with the same
// arguments); if so it ends the rewind, and the host function answers the call as a replay
// would. The host knows a rewind is under way because it started it: no wasm call is needed.
func (g *Guest) Resuming(ctx context.Context) (bool, error) {
	if !g.rewinding {
		return false, nil
	}
	g.rewinding = false
	if _, err := g.stopRewind.Call(ctx); err != nil {
		return false, fmt.Errorf("snapshot: stop rewind: %w", err)
	}
	if g.transient {
		g.mod.Memory().Write(g.buf, make([]byte, g.bufSize))
	}
	return true, nil
}

// Reset forgets what an earlier pass left in these fields (a pooled instance is reset to its
// initial memory between passes): no unwind or rewind under way, and a transient buffer to
// be grown again at the next Suspend.
func (g *Guest) Reset() {
	g.unwinding, g.rewinding = false, false
	if g.transient {
		g.buf = 0
	}
}

// Rewinding reports whether a rewind Restore or Continue started has not yet reached the call
// it returns into (Resuming).
func (g *Guest) Rewinding() bool { return g.rewinding }

// State is asyncify's own state (0 normal, 1 unwinding, 2 rewinding), for tests.
func (g *Guest) State(ctx context.Context) (uint32, error) {
	res, err := g.getState.Call(ctx)
	if err != nil {
		return 0, err
	}
	return api.DecodeU32(res[0]), nil
}

// Capture copies the guest's state after Suspended: linear memory (with the saved stack in the
// unwind buffer) and mutable globals.
func (g *Guest) Capture() *Image {
	im := g.view()
	im.Memory = bytes.Clone(im.Memory)
	return im
}

// CaptureTo writes the guest's state after Suspended as Image.Encode does, straight from its
// memory: no copy of the memory is made.
func (g *Guest) CaptureTo(w io.Writer, base []byte, level int) error {
	return g.view().Encode(w, base, level)
}

// view is the guest's state with Memory a view of its memory, valid until the guest runs or
// its memory grows.
func (g *Guest) view() *Image {
	mem := g.mod.Memory()
	b, _ := mem.Read(0, mem.Size())
	im := &Image{Memory: b, Buffer: g.buf, BufferSize: g.bufSize}
	for _, mg := range g.globals {
		im.Globals = append(im.Globals, mg.Get())
	}
	return im
}

// RestoreFrom is Restore of an image Encode wrote with base, read straight into this
// instance's memory. The instance must be in its post-initialisation state, its memory equal to
// base (a fresh instance, or one the host's pool has reset): only the blocks that differ from
// base are written. The memory is grown to the image's size first, within the instance's own
// limit; on an error it may hold part of the image, and the instance is to be discarded.
func (g *Guest) RestoreFrom(ctx context.Context, r io.Reader, base []byte) error {
	mem := g.mod.Memory()
	if mem.Size() != uint32(len(base)) {
		return fmt.Errorf("snapshot: memory is %d bytes, not the base's %d: not in its initial state", mem.Size(), len(base))
	}
	im, err := decodeImage(r, base, func(size int) ([]byte, error) {
		if cur := mem.Size(); uint32(size) > cur {
			if _, ok := mem.Grow((uint32(size) - cur) / pageSize); !ok {
				return nil, fmt.Errorf("snapshot: cannot grow memory to %d bytes", size)
			}
		}
		b, ok := mem.Read(0, uint32(size))
		if !ok || mem.Size() != uint32(size) {
			return nil, fmt.Errorf("snapshot: memory is %d bytes, the image %d", mem.Size(), size)
		}
		return b, nil
	}, len(g.globals))
	if err != nil {
		return err
	}
	return g.rewindInto(ctx, im)
}

// Continue rewinds this instance, after Suspended (and Capture), into the call that suspended
// it: a checkpoint taken at a durable boundary that is not a suspension, after which the pass
// goes on in the same instance. The host then calls the export again, as after Restore.
func (g *Guest) Continue(ctx context.Context) error {
	if _, err := g.startRewind.Call(ctx, api.EncodeU32(g.buf)); err != nil {
		return fmt.Errorf("snapshot: start rewind: %w", err)
	}
	g.rewinding = true
	return nil
}

// Restore puts im into this instance, a fresh (or reset) instance of the same transformed
// module, and starts a rewind: the host then calls the export the image unwound out of
// (wfhost_run) again, and the guest's code runs back down to the suspending call, skipping
// everything else, where Resuming ends the rewind.
func (g *Guest) Restore(ctx context.Context, im *Image) error {
	if len(im.Globals) != len(g.globals) {
		return fmt.Errorf("snapshot: the image has %d globals, the module %d", len(im.Globals), len(g.globals))
	}
	mem := g.mod.Memory()
	if size := uint32(len(im.Memory)); mem.Size() < size {
		if _, ok := mem.Grow((size - mem.Size()) / pageSize); !ok {
			return fmt.Errorf("snapshot: cannot grow memory to %d bytes", size)
		}
	}
	if mem.Size() != uint32(len(im.Memory)) {
		return fmt.Errorf("snapshot: memory is %d bytes, the image %d", mem.Size(), len(im.Memory))
	}
	mem.Write(0, im.Memory)
	return g.rewindInto(ctx, im)
}

// rewindInto sets the image's globals and buffer, its memory being in place, and starts the
// rewind.
func (g *Guest) rewindInto(ctx context.Context, im *Image) error {
	if len(im.Globals) != len(g.globals) {
		return fmt.Errorf("snapshot: the image has %d globals, the module %d", len(im.Globals), len(g.globals))
	}
	for i, mg := range g.globals {
		mg.Set(im.Globals[i])
	}
	g.buf, g.bufSize = im.Buffer, im.BufferSize
	if g.transient && (g.buf+g.bufSize != uint32(len(im.Memory))) {
		return errors.New("snapshot: the image's unwind buffer is not at the end of its memory")
	}
	if _, err := g.startRewind.Call(ctx, api.EncodeU32(g.buf)); err != nil {
		return fmt.Errorf("snapshot: start rewind: %w", err)
	}
	g.rewinding = true
	return nil
}
