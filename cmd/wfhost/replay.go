package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// defaultMaxExportBytes bounds the export file replay reads: a journal at the default limits
// (10,000 steps of at most 1 MiB each) is far smaller in practice, and a file of gigabytes is a
// mistake to refuse with a clear message, not one to read into memory.
const defaultMaxExportBytes = 256 << 20

// replayDivergedError is a dry replay that found the module diverging from the run's journal.
// The divergence is printed above; the message only says so.
type replayDivergedError struct{ seq int }

func (e *replayDivergedError) Error() string {
	return fmt.Sprintf("the module diverges from the run's journal at entry %d", e.seq)
}

func runsExportCommand() *cli.Command {
	return &cli.Command{
		Name: "export", Usage: "write a run and its whole journal as one JSON document, for wfhost replay", ArgsUsage: "WORKFLOW RUN_ID",
		Flags: clientFlags(&cli.StringFlag{Name: "file", Aliases: []string{"f"}, EnvVars: []string{"WFHOST_EXPORT_FILE"},
			Usage: "write the document to this file instead of stdout"}),
		Action: func(c *cli.Context) error {
			a, err := args(c, "WORKFLOW", "RUN_ID")
			if err != nil {
				return err
			}
			raw, err := get(c, client.RunPath(a[0], a[1])+"/export")
			if err != nil {
				return err
			}
			// The document is JSON whatever --output says: it is a file for replay to read.
			var doc bytes.Buffer
			if err := json.Indent(&doc, raw, "", "  "); err != nil {
				return fmt.Errorf("decoding the server's response: %w", err)
			}
			doc.WriteByte('\n')
			path := c.String("file")
			if path == "" {
				_, err = doc.WriteTo(out(c))
				return err
			}
			if err := os.WriteFile(path, doc.Bytes(), 0o600); err != nil {
				return usagef("--file %s: %v", path, err)
			}
			return nil
		},
	}
}

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "replay an exported run (wfhost runs export) against a module file, offline: compatible, or the first divergence",
		Description: "Journaled steps return their recorded results; nothing executes, commits or needs a daemon. " +
			"The replay stops at the first step the journal does not have, and prints where, or the run's end when the " +
			"module reaches it within the journal. Exit code 0: compatible; 9: the module diverges from the journal.",
		ArgsUsage: "EXPORT.json",
		Flags: append(outputFlags(),
			&cli.StringFlag{Name: "module", Aliases: []string{"m"}, Required: true, EnvVars: []string{"WFHOST_REPLAY_MODULE"}, Usage: "the .wasm module to replay the run on"},
			dataDirFlag(),
			cacheDirFlag(),
			&cli.Int64Flag{Name: "max-export-bytes", Value: defaultMaxExportBytes, EnvVars: []string{"WFHOST_MAX_EXPORT_BYTES"}, Usage: "refuse an export file larger than this"},
		),
		Action: replay,
	}
}

// replayResult is what replay prints under --output json: the report, with what it replayed.
type replayResult struct {
	Run          string `json:"run"`
	Workflow     string `json:"workflow"`
	ModuleDigest string `json:"moduleDigest"`
	// SameModule says the module file is the one the run is pinned to.
	SameModule bool `json:"sameModule"`
	*engine.ReplayReport
}

func replay(c *cli.Context) error {
	a, err := args(c, "EXPORT.json")
	if err != nil {
		return err
	}
	doc, err := readExport(a[0], c.Int64("max-export-bytes"))
	if err != nil {
		return err
	}
	journal, err := storeJournal(doc.Journal)
	if err != nil {
		return usagef("%s: %v", a[0], err)
	}
	wasm, err := os.ReadFile(c.String("module"))
	if err != nil {
		return usagef("--module: %v", err)
	}
	// Compiled code is kept apart from the daemon's cache: a replay never touches what a
	// daemon on the same data directory is using (unless --cache-dir names one for both).
	rt, err := host.NewRuntime(c.Context, host.Config{CacheDir: compileCacheDir(c, "replay-cache")})
	if err != nil {
		return err
	}
	defer rt.Close(c.Context)
	mod, err := rt.Load(c.Context, wasm)
	if err != nil {
		return fmt.Errorf("--module %s: %w", c.String("module"), err)
	}
	rep, err := engine.DryReplay(c.Context, rt, mod, engine.Replay{
		Workflow: doc.Run.Workflow, Input: doc.Run.Input, RunID: doc.Run.ID, CreatedAt: doc.Run.CreatedAt, Journal: journal,
	})
	if errors.Is(err, engine.ErrInvalid) {
		return usagef("%s: %v", a[0], err)
	}
	if err != nil {
		return err
	}
	sum := sha256.Sum256(wasm)
	res := replayResult{Run: doc.Run.ID, Workflow: doc.Run.Workflow, ModuleDigest: hex.EncodeToString(sum[:]), ReplayReport: rep}
	res.SameModule = res.ModuleDigest == doc.Run.ModuleDigest
	raw, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := render(c, raw, func(w *tabwriter.Writer, r replayResult) { printReplay(w, doc, r) }); err != nil {
		return err
	}
	if rep.Divergence != nil {
		return &replayDivergedError{seq: rep.Divergence.Seq}
	}
	return nil
}

// readExport reads and checks an export document: at most max bytes, UTF-8, one JSON object
// of the export's format with no field it does not know.
func readExport(path string, max int64) (*wire.RunExport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("%v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, usagef("%s: %v", path, err)
	}
	if int64(len(b)) > max {
		return nil, usagef("%s is larger than --max-export-bytes (%d bytes)", path, max)
	}
	if !utf8.Valid(b) {
		return nil, usagef("%s is not UTF-8: an export is a JSON document", path)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var doc wire.RunExport
	if err := dec.Decode(&doc); err != nil {
		return nil, usagef("%s is not a run export (wfhost runs export): %v", path, err)
	}
	if dec.More() {
		return nil, usagef("%s holds more than one JSON value", path)
	}
	if doc.Format != wire.ExportFormat {
		return nil, usagef("%s: format %q, want %q (wfhost runs export)", path, doc.Format, wire.ExportFormat)
	}
	if doc.Run.Workflow == "" {
		return nil, usagef("%s: the run has no workflow", path)
	}
	return &doc, nil
}

// storeJournal is an export's journal as the engine's records; DryReplay checks the rest.
func storeJournal(steps []wire.Step) ([]store.Step, error) {
	out := make([]store.Step, 0, len(steps))
	for i, s := range steps {
		if len(s.Output) > 0 && !json.Valid(s.Output) {
			return nil, fmt.Errorf("journal entry %d: output is not JSON", i)
		}
		out = append(out, store.Step{
			Seq: s.Seq, Key: s.Key, Kind: store.StepKind(s.Kind), Status: store.StepStatus(s.Status), Attempt: s.Attempt,
			Output: s.Output, Error: s.Error, WakeAt: s.WakeAt, Event: s.Event, Match: s.Match, StartedAt: s.StartedAt,
			CompletedAt: s.CompletedAt,
		})
	}
	return out, nil
}

// printReplay prints a dry replay for people: the verdict, and a divergence as a diff of the
// journal against what the module reached.
func printReplay(w *tabwriter.Writer, doc *wire.RunExport, r replayResult) {
	module := "another module than the run's (" + doc.Run.ModuleDigest + ")"
	if r.SameModule {
		module = "the run's own module"
	}
	fmt.Fprintf(w, "run\t%s\nworkflow\t%s@%s\nmodule\t%s, %s\n", r.Run, doc.Run.Workflow, doc.Run.Version, r.ModuleDigest, module)
	fmt.Fprintf(w, "verdict\t%s\nreplayed\t%d of %d journal entries\n", r.Verdict, r.Replayed, r.Journal)
	switch {
	case r.Divergence != nil:
		fmt.Fprintf(w, "divergence\t%s\n", r.Divergence.Message)
	case r.Stopped != nil && r.Stopped.New:
		fmt.Fprintf(w, "stopped at\tentry %d, %s: new, the journal ends before it\n", r.Stopped.Seq, r.Stopped.At)
	case r.Stopped != nil:
		fmt.Fprintf(w, "stopped at\tentry %d, %s: the journal has it without its end\n", r.Stopped.Seq, r.Stopped.At)
	case r.Error != nil:
		fmt.Fprintf(w, "ended\tfailed: %s\n", r.Error)
		if doc.Run.Status == wire.RunCompleted {
			// Not a divergence of the journal, but not what the run did either.
			fmt.Fprintf(w, "run's output\t%s (the run completed)\n", compactJSON(doc.Run.Output))
		}
	case r.Ended && r.ContinuedAsNew != nil:
		fmt.Fprintf(w, "ended\tcontinued as new\nnext input\t%s\n", compactJSON(r.ContinuedAsNew))
	case r.Ended:
		fmt.Fprintf(w, "ended\tcompleted\noutput\t%s\n", compactJSON(r.Output))
		if len(doc.Run.Output) > 0 && !sameJSON(doc.Run.Output, r.Output) {
			fmt.Fprintf(w, "run's output\t%s (differs)\n", compactJSON(doc.Run.Output))
		}
	}
	_ = w.Flush()
	if d := r.Divergence; d != nil {
		fmt.Fprintln(w, "\n--- journal\n+++ module")
		from := max(0, d.Seq-3)
		for i := from; i < d.Seq; i++ {
			s := doc.Journal[i]
			fmt.Fprintf(w, "  %d\t%s %q\n", i, s.Kind, s.Key)
		}
		fmt.Fprintf(w, "- %d\t%s\n", d.Seq, d.Expected)
		switch {
		case d.Reached != nil:
			fmt.Fprintf(w, "+ %d\t%s\n", d.Seq, *d.Reached)
		case r.Error != nil:
			fmt.Fprintf(w, "+ %d\t(the workflow ended, failed: %s)\n", d.Seq, r.Error)
		default:
			fmt.Fprintf(w, "+ %d\t(the workflow ended, output %s)\n", d.Seq, compactJSON(r.Output))
		}
		_ = w.Flush()
	}
	if len(r.Logs) > 0 {
		fmt.Fprintln(w, "\nguest log:")
		for _, l := range r.Logs {
			src := l.Stream
			if src == "" {
				src = "log"
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\n", l.Level, src, l.Message)
		}
		if r.LogsDropped > 0 {
			fmt.Fprintf(w, "  (%d more records dropped)\n", r.LogsDropped)
		}
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
