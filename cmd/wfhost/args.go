package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// globalNames are the flags that may come before the command as well as after it, as in the
// GitHub and Temporal CLIs: where to connect, with which token, and how to print.
var globalNames = []string{"url", "token", "output", "o", "json"}

// globalFlags are the app's own copies of the global flags. They are defined on the app so
// `wfhost --url U runs list` parses and --help lists them; flagsFirst moves each to the
// command when the command has it, so a command reads one flag whichever side it was given.
func globalFlags() []cli.Flag {
	return append([]cli.Flag{urlFlag(), tenantTokenFlags()[0]}, outputFlags()...)
}

// flagsFirst rewrites args into what urfave/cli v2 parses: the flags of the command named in
// args ahead of its positional arguments, so `wfhost start steps --input {}` works (urfave/cli
// stops reading flags at the first positional argument), and the global flags given before
// the command (or between its words) moved to the command that has them, so
// `wfhost --url U start steps` works. A global flag the command does not have stays the
// app's. A flag's value travels with it; "--" ends the reordering. A shell-completion request
// is left as it is: urfave/cli reads it as given.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	// Flags among the command's words, each with its value and whether a command word came
	// before it: one that did may be the command's own flag.
	type early struct {
		pair         []string
		afterCommand bool
	}
	var global []early
	var path []string
	var cmd *cli.Command
	i := 1
	for i < len(args) {
		a := args[i]
		if isFlag(a) {
			known := app.Flags
			if cmd != nil {
				known = append(append([]cli.Flag{}, cmd.Flags...), app.Flags...)
			}
			e := early{pair: []string{a}, afterCommand: cmd != nil}
			if !strings.Contains(a, "=") && takesValue(known, flagName(a)) && i+1 < len(args) {
				i++
				e.pair = append(e.pair, args[i])
			}
			global = append(global, e)
			i++
			continue
		}
		next := findCommand(cmds, a)
		if next == nil {
			break
		}
		cmd = next
		path = append(path, a)
		cmds = cmd.Subcommands
		i++
	}
	if cmd == nil {
		return args
	}
	var appFlags, flags, positional []string
	// Flags given before the command come first among its flags, so the same flag after the
	// command, later on the command line, wins.
	for _, e := range global {
		// A global flag goes where it is defined; any other flag after a command word is the
		// command's, which reports it if it has no such flag.
		name := flagName(e.pair[0])
		toCommand := e.afterCommand
		if contains(globalNames, name) {
			toCommand = hasFlag(cmd.Flags, name)
		}
		if toCommand {
			flags = append(flags, e.pair...)
		} else {
			appFlags = append(appFlags, e.pair...)
		}
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if !isFlag(a) {
			positional = append(positional, a)
			continue
		}
		pair := []string{a}
		name := flagName(a)
		own := hasFlag(cmd.Flags, name)
		fs := cmd.Flags
		if !own && contains(globalNames, name) {
			fs = app.Flags
		}
		if !strings.Contains(a, "=") && takesValue(fs, name) && i+1 < len(args) {
			i++
			pair = append(pair, args[i])
		}
		if !own && contains(globalNames, name) {
			appFlags = append(appFlags, pair...)
		} else {
			flags = append(flags, pair...)
		}
	}
	out = append(append(out, appFlags...), path...)
	return append(append(out, flags...), positional...)
}

func isFlag(a string) bool { return strings.HasPrefix(a, "-") && a != "-" && a != "--" }

// flagName is the name in "--name", "-name" or "--name=value".
func flagName(a string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name || contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if contains(f.Names(), name) {
			return true
		}
	}
	return false
}

func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if contains(f.Names(), name) {
			_, isBool := f.(*cli.BoolFlag)
			return !isBool
		}
	}
	return false
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
