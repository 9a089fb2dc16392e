package host_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
)

// TestErrorRedactedBeforeMadeStorable: a secret holding a NUL, written by the guest into a
// step's or the run's error (as JSON's \u0000, or as the raw byte in an error that is not
// JSON), is redacted whole. Before, the error was made storable first: the NUL became U+FFFD,
// the secret no longer matched, and all of it but that byte was kept.
func TestErrorRedactedBeforeMadeStorable(t *testing.T) {
	t.Parallel()
	const secret = "sk_live\x00_4f9a0c27d1e6b835"
	for _, where := range []string{"step-error", "run-error"} {
		for _, enc := range []string{"raw", "std", "u"} {
			t.Run(fmt.Sprintf("%s/%s", where, enc), func(t *testing.T) {
				t.Parallel()
				h := newRecorder(map[string]string{"s": secret})
				p := runProbe(t, h, map[string]any{"secret": "s", "where": where, "enc": enc}, nil)
				if p.err != nil {
					t.Fatalf("activation: %v", p.err)
				}
				noSecret(t, p, secret)
				// Nor in the form a store keeps once the NUL is made storable, nor its tail.
				noSecret(t, p, abi.StorableText(secret))
				noSecret(t, p, secret[strings.IndexByte(secret, 0)+1:])
				if all := strings.Join(p.everything(), "\n"); !strings.Contains(all, abi.Redacted) {
					t.Errorf("no redaction shows: %s", all)
				}
			})
		}
	}
}
