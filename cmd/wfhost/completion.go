package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// `wfhost version` and `wfhost completion SHELL`, as the GitHub and Temporal CLIs have them.

func versionCommand() *cli.Command {
	return &cli.Command{
		Name: "version", Usage: "print this build's version (the same as --version)",
		Action: func(c *cli.Context) error {
			if _, err := args(c); err != nil {
				return err
			}
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			if format != "table" {
				raw, err := json.Marshal(map[string]string{"name": c.App.Name, "version": c.App.Version})
				if err != nil {
					return err
				}
				return printDocument(c, raw)
			}
			cli.VersionPrinter(c)
			return nil
		},
	}
}

// Completion works as urfave/cli's does (EnableBashCompletion): the shell runs
// `wfhost WORDS... --generate-bash-completion`, which prints the commands or, after a "-",
// the flags that may come next. The bash and zsh scripts are urfave/cli's
// (autocomplete/bash_autocomplete, zsh_autocomplete) with the program named; fish's is
// generated from the command tree and lists each command's flags.

const bashCompletion = `# bash completion for wfhost: source it, or put it in /etc/bash_completion.d/wfhost
_wfhost_complete() {
  local cur words cword
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n "=:" || return
  else
    COMPREPLY=()
    _get_comp_words_by_ref -n "=:" cur words cword
  fi
  local opts
  if [[ "$cur" == "-"* ]]; then
    opts=$("${words[@]:0:$cword}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]:0:$cword}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
}
complete -o bashdefault -o default -F _wfhost_complete wfhost
`

const zshCompletion = `#compdef wfhost
# zsh completion for wfhost: put it on $fpath as _wfhost, or source it after compinit
_wfhost() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _wfhost wfhost
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name: "completion", Usage: "print a shell completion script: bash, zsh or fish", ArgsUsage: "bash|zsh|fish",
		Description: "bash:  source <(wfhost completion bash)      (or save it in /etc/bash_completion.d/wfhost)\n" +
			"zsh:   source <(wfhost completion zsh)       (after compinit; or save it on $fpath as _wfhost)\n" +
			"fish:  wfhost completion fish > ~/.config/fish/completions/wfhost.fish",
		Action: func(c *cli.Context) error {
			a, err := args(c, "SHELL")
			if err != nil {
				return err
			}
			var script string
			switch a[0] {
			case "bash":
				script = bashCompletion
			case "zsh":
				script = zshCompletion
			case "fish":
				if script, err = c.App.ToFishCompletion(); err != nil {
					return fmt.Errorf("generating the fish script: %w", err)
				}
			default:
				return usagef("completion: unknown shell %q: want bash, zsh or fish", a[0])
			}
			_, err = fmt.Fprint(out(c), strings.TrimLeft(script, "\n"))
			return err
		},
	}
}
