package api_test

import (
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/wasmgen"
)

// TestUploadNamesWhatIsNotDeterministic: a module refused because it could behave differently
// on another host gets a 400 whose message names the instruction, as the tenant sees it.
func TestUploadNamesWhatIsNotDeterministic(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"atomic", []byte{wasmgen.OpI32Const, 0, 0xfe, 0x10, 0x02, 0x00, wasmgen.OpDrop}, "atomic instruction i32.atomic.load (0xfe 0x10) (threads)"},
		{"relaxed SIMD", append(append(append([]byte{0xfd, 0x0c}, make([]byte, 16)...), append([]byte{0xfd, 0x0c}, make([]byte, 16)...)...), 0xfd, 0x80, 0x02, wasmgen.OpDrop),
			"relaxed SIMD instruction i8x16.relaxed_swizzle (0xfd 256)"},
	} {
		wasm := wasmgen.Workflow{Extra: []wasmgen.Func{{Type: wasmgen.FuncType{}, Body: c.body}}}.Encode()
		r := call(t, srv, "POST", "/v1/modules", tok, wasm)
		if r.status != 400 || r.errorCode(t) != "invalid_request" || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %d %s, want 400 naming %q", c.name, r.status, r.body, c.want)
		}
	}
}
