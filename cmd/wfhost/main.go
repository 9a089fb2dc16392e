package main

import (
	"fmt"
	"os"

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
		Name:  "wfhost",
		Usage: "durable workflows whose bodies are WebAssembly modules",
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
