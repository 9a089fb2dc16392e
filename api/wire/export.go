package wire

// ExportFormat names the document of GET .../runs/{id}/export; a reader refuses any other, so
// a later change of the document's shape is a new name.
const ExportFormat = "wfhost.run-export/1"

// RunExport is one run as one JSON document (GET .../runs/{id}/export): the run (its input and
// the digest of the module it is pinned to included) and its whole journal, what `wfhost
// replay` replays offline against a module file.
type RunExport struct {
	Format  string `json:"format"`
	Run     Run    `json:"run"`
	Journal []Step `json:"journal"`
}
