package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/wasmgen"
	"github.com/wfhost/wfhost/store"
)

// TestModuleOverTheMemoryLimit (finding 6 of the attack): a module whose declared minimum
// memory is over the tenant's memory limit is refused at deploy, saying so; and when the limit
// is lowered under a deployed module, its runs fail at once with memory_limit instead of being
// retried every two seconds forever.
func TestModuleOverTheMemoryLimit(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	ctx := context.Background()
	wasm := wasmgen.Workflow{Name: "big", MemoryMin: 100}.Encode()
	if _, err := h.engine.SetTenantLimits(ctx, store.DefaultTenant, store.Limits{MemoryPages: 64}); err != nil {
		t.Fatal(err)
	}
	_, err := h.engine.Deploy(ctx, store.DefaultTenant, wasm, false)
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "needs at least 100 pages") || !strings.Contains(err.Error(), "memoryPages limit is 64") {
		t.Fatalf("deploy over the limit: %v", err)
	}
	if _, err := h.engine.SetTenantLimits(ctx, store.DefaultTenant, store.Limits{MemoryPages: 128}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.engine.Deploy(ctx, store.DefaultTenant, wasm, false); err != nil {
		t.Fatalf("deploy under the limit: %v", err)
	}
	if r := h.await(h.start("big", nil).ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("run under the limit: %s %+v", r.Status, r.Error)
	}
	if _, err := h.engine.SetTenantLimits(ctx, store.DefaultTenant, store.Limits{MemoryPages: 64}); err != nil {
		t.Fatal(err)
	}
	r := h.await(h.start("big", nil).ID, settle)
	if r.Status != store.StatusFailed || r.Error == nil || r.Error.Code != abi.CodeMemoryLimit || !strings.Contains(r.Error.Message, "at least 100 pages") {
		t.Fatalf("run over the limit: %s %+v; want failed with %s", r.Status, r.Error, abi.CodeMemoryLimit)
	}
	if strings.Contains(h.logs.String(), "trying the run again later") {
		t.Fatal("the run was retried: a limit the module can never meet is not a passing fault")
	}
}

// TestHostileUploadsAreRefused: every generated bomb and spec violation is refused by Deploy
// as invalid (the API's 400), naming its fault, and nothing of it is stored.
func TestHostileUploadsAreRefused(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	ctx := context.Background()
	for _, c := range append(wasmgen.Bombs(), wasmgen.TrapsAndAbuse()...) {
		if c.Refused == "" {
			continue
		}
		_, err := h.engine.Deploy(ctx, store.DefaultTenant, c.Wasm, false)
		if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), c.Refused) {
			t.Errorf("%s: %v; want ErrInvalid mentioning %q", c.Name, err, c.Refused)
		}
	}
	mods, err := h.store.ListModules(ctx, store.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 0 {
		t.Fatalf("%d modules stored after refused uploads", len(mods))
	}
}
