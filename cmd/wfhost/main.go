package main

import (
	"io"
	"os"
	"runtime/debug"
	// The IANA time zone database in the binary: schedules' zones (engine/schedules.go) must
	// read the same on every host, including images with no /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/host"
)

func main() {
	// The host runtime compiles uploads in a copy of this process started in a hidden worker
	// mode (host/compileworker.go); such a copy compiles, answers and exits here.
	host.ServeCompileWorkerIfAsked()
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run is the whole program: it runs the command args name and returns the exit code of its
// outcome (errors.go), having printed a failure once, on stderr, in the output format asked.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	app := newApp()
	app.Reader, app.Writer, app.ErrWriter = stdin, stdout, stderr
	if err := app.Run(flagsFirst(app, args)); err != nil {
		return report(stderr, err, errorFormat(args, getenv))
	}
	return exitOK
}

func newApp() *cli.App {
	app := &cli.App{
		Name:    "wfhost",
		Usage:   "durable workflows whose bodies are WebAssembly modules",
		Version: version(),
		// The client's connection and output flags may come before the command too, as in
		// `wfhost --url http://host:8080 runs list`; flagsFirst hands them to the command.
		Flags: globalFlags(),
		Commands: []*cli.Command{
			runCommand(),
			migrateCommand(),
			initCommand(),
			secretKeysCommand(),
			deployCommand(),
			modulesCommand(),
			upgradesCommand(),
			workflowsCommand(),
			startCommand(),
			runsCommand(),
			replayCommand(),
			testCommand(),
			signalCommand(),
			signalWithStartCommand(),
			eventsCommand(),
			schedulesCommand(),
			hooksCommand(),
			tenantsCommand(),
			tokensCommand(),
			versionCommand(),
			completionCommand(),
		},
		// Without a command: the help. With a word that is none: a usage error, where
		// urfave/cli would say "No help topic".
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("unknown command %q (see wfhost --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		EnableBashCompletion: true,
		OnUsageError:         onUsageError,
		// Errors are printed once, by run.
		ExitErrHandler: func(*cli.Context, error) {},
	}
	markActions(app.Commands)
	return app
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
