//go:build !unix

package embedded

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir creates dir/wfhost.lock exclusively where flock is not available. A crashed daemon
// leaves the file behind, and the error says to delete it.
func lockDir(dir string) (release func(), err error) {
	path := filepath.Join(dir, "wfhost.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is held by another wfhost daemon (or one crashed: delete %s)", ErrLocked, dir, path)
	}
	return func() { f.Close(); os.Remove(path) }, nil
}
