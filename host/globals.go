package host

import "github.com/wfhost/wfhost/host/snapshot"

// exportGlobals returns a copy of a wasm binary that also exports each of its own mutable
// globals under globalExportPrefix+index, and those names. wazero reaches an instance's
// globals only through exports, and an instance can be reset for reuse only if its globals can
// be put back along with its memory (a Go guest keeps its stack pointer in one); a snapshot
// needs them too (snapshots.go). A module it cannot rewrite (no export section, a v128 global,
// a construct the parser does not know) is reported with an error, and such a module simply
// runs on fresh instances, and is never snapshotted. One rewriter serves both: host/snapshot's.
func exportGlobals(wasm []byte) ([]byte, []string, error) {
	return snapshot.ExportGlobals(wasm, globalExportPrefix)
}

// globalExportPrefix names the exports exportGlobals adds; the ABI reserves the wfhost prefix.
const globalExportPrefix = "wfhost.global."
