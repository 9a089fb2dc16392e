package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/engine/wftest"
	"github.com/wfhost/wfhost/host"
)

// maxScenarioFiles bounds one wfhost test: a directory of thousands of files is a mistake.
const maxScenarioFiles = 1000

// testsFailedError is a wfhost test whose scenarios did not all pass; the summary is above.
type testsFailedError struct{ failed, total int }

func (e *testsFailedError) Error() string {
	return fmt.Sprintf("%d of %d scenarios failed", e.failed, e.total)
}

func testCommand() *cli.Command {
	return &cli.Command{
		Name:  "test",
		Usage: "run workflow scenarios deterministically on a module: virtual time, a crash at every store write, duplicated, early and late events",
		Description: "Each scenario file (JSON: workflow, input, events at virtual times, secrets, expect) runs on a fresh embedded " +
			"store with a fake clock, so a 30-day sleep passes at once; then again with a crash injected before and after each " +
			"store write the run made (a fresh engine takes over), and with its events duplicated, early and late. Every " +
			"variant must end as the first did, and the first as the scenario expects. Arguments are files or directories " +
			"(their *.json). Exit code 0: every scenario passed; 10: one failed; 2: a file or flag is wrong.",
		ArgsUsage: "SCENARIO.json|DIR...",
		Flags: append(outputFlags(),
			&cli.StringFlag{Name: "module", Aliases: []string{"m"}, Required: true, EnvVars: []string{"WFHOST_TEST_MODULE"}, Usage: "the .wasm module the scenarios run on"},
			&cli.BoolFlag{Name: "no-crashes", Usage: "skip the crash variants (a quick run)"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "the longest one variant may take in real time"},
			dataDirFlag(),
			cacheDirFlag(),
		),
		Action: runTests,
	}
}

func runTests(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("needs at least 1 argument: SCENARIO.json or a directory of them")
	}
	if c.Duration("timeout") <= 0 {
		return usagef("--timeout must be positive: %v", c.Duration("timeout"))
	}
	paths, err := scenarioFiles(c.Args().Slice())
	if err != nil {
		return err
	}
	scenarios := make([]*wftest.Scenario, 0, len(paths))
	for _, p := range paths {
		sc, err := wftest.Load(p)
		if err != nil {
			return usagef("%v", err)
		}
		if sc.Name == "" {
			sc.Name = strings.TrimSuffix(filepath.Base(p), ".json")
		}
		scenarios = append(scenarios, sc)
	}
	wasm, err := os.ReadFile(c.String("module"))
	if err != nil {
		return usagef("--module: %v", err)
	}
	// Compiled code is kept apart from the daemon's cache (unless --cache-dir says otherwise),
	// as replay's is.
	rt, err := host.NewRuntime(c.Context, host.Config{CacheDir: compileCacheDir(c, "test-cache")})
	if err != nil {
		return err
	}
	defer rt.Close(c.Context)
	if _, err := rt.Load(c.Context, wasm); err != nil {
		return usagef("--module %s: %v", c.String("module"), err)
	}
	opts := wftest.Options{Runtime: rt, Module: wasm, Timeout: c.Duration("timeout"), NoCrashes: c.Bool("no-crashes")}
	asJSON := c.Bool("json") || c.String("output") == "json"
	var results []*wftest.Result
	failed := 0
	w := out(c)
	for _, sc := range scenarios {
		res, err := wftest.Run(c.Context, opts, sc)
		if err != nil {
			return err
		}
		results = append(results, res)
		if !res.Passed {
			failed++
		}
		if !asJSON {
			printTestResult(w, res)
		}
	}
	if asJSON {
		b, err := json.MarshalIndent(struct {
			Module    string           `json:"module"`
			Passed    int              `json:"passed"`
			Failed    int              `json:"failed"`
			Scenarios []*wftest.Result `json:"scenarios"`
		}{c.String("module"), len(results) - failed, failed, results}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\n", b)
	} else {
		fmt.Fprintf(w, "%d passed, %d failed (%s)\n", len(results)-failed, failed, c.String("module"))
	}
	if failed > 0 {
		return &testsFailedError{failed: failed, total: len(results)}
	}
	return nil
}

// printTestResult is one summary line a scenario, and a line for each variant that failed.
func printTestResult(w interface{ Write([]byte) (int, error) }, r *wftest.Result) {
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s  %s  (%d variants, %s)\n", verdict, r.Scenario, len(r.Variants), r.Elapsed)
	for _, v := range r.Variants {
		if v.Problem != "" {
			fmt.Fprintf(w, "      %s: %s\n", v.Name, v.Problem)
		}
	}
}

// scenarioFiles is the files the arguments name: files as given, directories' *.json in name
// order.
func scenarioFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.json"))
		if err != nil {
			return nil, usagef("%s: %v", a, err)
		}
		if len(m) == 0 {
			return nil, usagef("%s holds no *.json scenario", a)
		}
		slices.Sort(m)
		out = append(out, m...)
	}
	if len(out) > maxScenarioFiles {
		return nil, usagef("%d scenario files: at most %d in one run", len(out), maxScenarioFiles)
	}
	return out, nil
}
