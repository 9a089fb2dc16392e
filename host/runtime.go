package host

import (
	"context"
	"errors"
	"log/slog"

	"github.com/wfhost/wfhost/abi"
)

// PLACEHOLDER: signatures only; the wazero implementation replaces this file's bodies.

// ErrInvalidModule is wrapped by every Load error that is the module's fault.
var ErrInvalidModule = errors.New("invalid module")

// GuestError is how Activate reports a pass the guest ended badly: a trap, the deadline, an
// ABI violation, an oversized payload, no result, an unknown workflow.
type GuestError struct{ Info abi.ErrorInfo }

func (e *GuestError) Error() string { return e.Info.Error() }

// Config configures a Runtime.
type Config struct {
	CacheDir       string // compilation cache directory; "" keeps compiled code in memory only
	MaxModuleBytes int
	Logger         *slog.Logger
}

// Runtime compiles modules and runs activations. Safe for concurrent use.
type Runtime struct{}

// Module is a validated, compiled module. Safe for concurrent use.
type Module struct {
	Digest      string
	Size        int
	ABIVersion  int
	Description abi.Description
}

// NewRuntime creates a Runtime.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) { panic("unimplemented") }

// Close releases compiled modules.
func (r *Runtime) Close(ctx context.Context) error { panic("unimplemented") }

// Load validates and compiles wasm, once per digest.
func (r *Runtime) Load(ctx context.Context, wasm []byte) (*Module, error) { panic("unimplemented") }

// Activate runs one pass on a fresh instance.
func (r *Runtime) Activate(ctx context.Context, m *Module, a Activation) (Result, error) {
	panic("unimplemented")
}
