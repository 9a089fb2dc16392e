package host

import (
	"context"
	"slices"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/wfhost/wfhost/abi"
)

// extismPlugin is an Extism module compiled by go-sdk for one memory limit, with the idle
// instances kept for reuse. Safe for concurrent use.
//
// It reuses instances as compiledModule does (pool.go), for the same reason: a standard Go
// guest costs milliseconds to instantiate and initialise. A go-sdk Plugin is two modules, the
// Extism kernel and the guest. The kernel needs nothing: go-sdk resets it at the start of every
// call. The guest's memory and mutable globals are put back to a snapshot taken right after its
// initialisation, as natively. go-sdk does not give out the guest's module, so a function
// listener on wfhost_abi_version (the call that initialises a new instance) picks it up; the
// listener is compiled into that one function only.
type extismPlugin struct {
	shared // done is closed when cp or err is set
	cp     *extism.CompiledPlugin
	took   time.Duration
	err    error
	resetPool[*extismInstance]
}

// extismInstance is one plug-in instance: the go-sdk Plugin and, within instance, its guest
// module and the indirection its clock, random source and output go through.
type extismInstance struct {
	instance
	plug *extism.Plugin
}

// findGuestModule is the listener factory that picks up an instance's guest module.
type findGuestModule struct{}

func (findGuestModule) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if def.GoFunction() == nil && slices.Contains(def.ExportNames(), abi.ExportABIVersion) {
		return guestModuleListener{}
	}
	return nil
}

type guestModuleKey struct{}

// guestModuleListener gives the module of a wfhost_abi_version call to the instance in the
// call's context, if any.
type guestModuleListener struct{}

func (guestModuleListener) Before(ctx context.Context, mod api.Module, _ api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if inst, ok := ctx.Value(guestModuleKey{}).(*extismInstance); ok && inst.mod == nil {
		inst.mod = mod
	}
}

func (guestModuleListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (guestModuleListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// take returns an instance in the snapshot's state, holding st, and how long making it took
// (zero for an idle one).
func (p *extismPlugin) take(ctx context.Context, st *state) (*extismInstance, time.Duration, *takeError) {
	if inst, ok := p.takeIdle(); ok {
		inst.io.st = st
		return inst, 0, nil
	}

	began := time.Now()
	inst := &extismInstance{instance: instance{io: &instanceIO{st: newInitState(st)}}}
	plug, err := p.cp.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: inst.io.config()})
	if err != nil {
		return nil, 0, &takeError{"instantiate", inst.io.st, err}
	}
	inst.plug = plug
	plug.SetLogger(func(extism.LogLevel, string) {})
	// go-sdk runs the guest's _initialize lazily, before the first call of anything else;
	// wfhost_abi_version is the cheapest call that makes it happen, under the initialisation
	// state, and its listener finds the guest's module.
	if _, _, err := plug.CallWithContext(context.WithValue(ctx, guestModuleKey{}, inst), abi.ExportABIVersion, nil); err != nil {
		_ = plug.Close(context.WithoutCancel(ctx))
		return nil, 0, &takeError{abi.ExportInitialize, inst.io.st, err}
	}
	p.adopt(&inst.instance)
	inst.io.st = st
	return inst, time.Since(began), nil
}

// release puts the instance back to the snapshot and keeps it, or closes it and says why. An
// activation whose context ended (deadline, cancel) may have left the kernel closed mid-call:
// its instance is not kept.
func (p *extismPlugin) release(ctx, gctx context.Context, inst *extismInstance) (discarded string) {
	inst.io.st = nil
	discarded = DiscardInterrupted
	if gctx.Err() == nil {
		discarded = p.keep(inst, &inst.instance)
	}
	if discarded != "" {
		_ = inst.plug.Close(ctx)
	}
	return discarded
}

// closeIdle closes every idle instance.
func (p *extismPlugin) closeIdle(ctx context.Context) {
	for _, inst := range p.drain() {
		_ = inst.plug.Close(ctx)
	}
}
