package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst moves the flags of the command named in args ahead of its positional arguments,
// so `wfhost start steps --input {}` works: urfave/cli v2 stops reading flags at the first
// positional argument. A flag's value travels with it; "--" ends the reordering.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	i := 1
	var cmd *cli.Command
	for i < len(args) {
		next := findCommand(cmds, args[i])
		if next == nil {
			break
		}
		cmd = next
		out = append(out, args[i])
		cmds = cmd.Subcommands
		i++
	}
	if cmd == nil {
		return args
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		if !strings.Contains(a, "=") && takesValue(cmd, strings.TrimLeft(a, "-")) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(append(out, flags...), positional...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name || contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

func takesValue(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
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
