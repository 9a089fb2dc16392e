package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/host"
)

func main() {
	// The host runtime compiles uploads in a copy of this process started in a hidden worker
	// mode (host/compileworker.go); such a copy compiles, answers and exits here.
	host.ServeCompileWorkerIfAsked()
	app := newApp()
	if err := app.Run(flagsFirst(app, os.Args)); err != nil {
		fmt.Fprintln(os.Stderr, "wfhost:", err)
		os.Exit(1)
	}
}

func newApp() *cli.App {
	return &cli.App{
		Name:    "wfhost",
		Usage:   "durable workflows whose bodies are WebAssembly modules",
		Version: version(),
		Commands: []*cli.Command{
			runCommand(),
			migrateCommand(),
			secretKeysCommand(),
			deployCommand(),
			modulesCommand(),
			workflowsCommand(),
			startCommand(),
			runsCommand(),
			signalCommand(),
			eventsCommand(),
			tenantsCommand(),
			tokensCommand(),
		},
		// Errors are printed once, by main.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}

// version is this build's: the module version `go install` records, else the commit `go build`
// records in a checkout ("devel-<commit>", "+dirty" with uncommitted changes), else "devel".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			revision = s.Value[:min(12, len(s.Value))]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if revision == "" {
		return "devel"
	}
	return "devel-" + revision + dirty
}
