package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
)

// Exit codes, by class of failure, so a script can tell a typo from an outage without reading
// the message. The table is in doc.go and in the README; classify is the only place that maps
// an error to one.
const (
	exitOK          = 0
	exitOther       = 1  // anything below does not cover: a 400, 413 or 429 from the server, a bad response
	exitUsage       = 2  // the command line is wrong: unknown command or flag, missing argument, bad flag value, unreadable file
	exitAuth        = 3  // no token, or the server refused it (401, 403)
	exitNotFound    = 4  // 404: no such workflow, run, tenant or token
	exitConflict    = 5  // 409: the state does not allow it (a run already ended, a version bound to another module)
	exitRunFailed   = 6  // start --wait: the run ended failed, cancelled or nondeterministic, or is paused
	exitTimeout     = 7  // start --wait: the run had not ended within --timeout
	exitUnavailable = 8  // the daemon could not be reached, or answered 5xx
	exitDiverged    = 9  // replay: the module diverges from the run's journal
	exitTestFailed  = 10 // test: a scenario, or one of its variants, did not end as it must
)

// failure is an error as the CLI reports it: the class's exit code, a stable code for
// programs (the server's, when the server answered), and the HTTP status when there was one.
type failure struct {
	exit       int
	code       string
	message    string
	httpStatus int
}

// usageError is a command line the CLI refuses before it sends anything.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// authError is a command that has no token to send.
type authError struct{ msg string }

func (e *authError) Error() string { return e.msg }

// runEndedError is start --wait's run ending other than completed. Its message names the
// error's code only: the run, with its whole error (a stack, often), is already printed above.
type runEndedError struct {
	id, status, code string
}

func (e *runEndedError) Error() string {
	msg := fmt.Sprintf("run %s ended %s", e.id, e.status)
	if e.code != "" {
		msg += ": " + e.code
	}
	return msg
}

// waitTimeoutError is start --wait giving up on a run that is still going.
type waitTimeoutError struct{ msg string }

func (e *waitTimeoutError) Error() string { return e.msg }

// actionError marks an error a command's own action returned. Everything else app.Run
// returns comes from urfave/cli itself (an unknown command, a required flag missing), which
// is a usage error.
type actionError struct{ err error }

func (e *actionError) Error() string { return e.err.Error() }
func (e *actionError) Unwrap() error { return e.err }

// classify is the one mapping from an error to its class, code and message.
func classify(err error) failure {
	var (
		apiErr  *client.Error
		usage   *usageError
		auth    *authError
		ended   *runEndedError
		timeout *waitTimeoutError
		diverge *replayDivergedError
		tests   *testsFailedError
		netErr  *url.Error
		action  *actionError
	)
	switch {
	case errors.As(err, &apiErr):
		f := failure{exit: exitOther, code: apiErr.Code, message: apiErr.Detail(), httpStatus: apiErr.Status}
		switch s := apiErr.Status; {
		case s == 401 || s == 403:
			f.exit = exitAuth
		case s == 404:
			f.exit = exitNotFound
		case s == 409:
			f.exit = exitConflict
		case s >= 500:
			f.exit = exitUnavailable
		}
		return f
	case errors.As(err, &usage):
		return failure{exit: exitUsage, code: "usage", message: err.Error()}
	case errors.As(err, &auth):
		return failure{exit: exitAuth, code: "unauthorized", message: err.Error()}
	case errors.As(err, &ended):
		return failure{exit: exitRunFailed, code: "run_" + ended.status, message: err.Error()}
	case errors.As(err, &timeout):
		return failure{exit: exitTimeout, code: "timeout", message: err.Error()}
	case errors.As(err, &diverge):
		return failure{exit: exitDiverged, code: "diverged", message: err.Error()}
	case errors.As(err, &tests):
		return failure{exit: exitTestFailed, code: "test_failed", message: err.Error()}
	case errors.As(err, &netErr):
		// --url is checked before any request (apiURL), so a failing request is the daemon
		// not answering: refused, reset, unresolvable or timed out.
		return failure{exit: exitUnavailable, code: "unavailable",
			message: fmt.Sprintf("cannot reach the daemon (%s %s): %v", netErr.Op, netErr.URL, netErr.Err)}
	case !errors.As(err, &action):
		return failure{exit: exitUsage, code: "usage", message: err.Error()}
	}
	return failure{exit: exitOther, code: "error", message: err.Error()}
}

// text is the failure for people: the server's code and status ahead of its message, as
// api/client words it.
func (f failure) text() string {
	if f.httpStatus != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", f.code, f.httpStatus, f.message)
	}
	return f.message
}

// errorBody is the failure under --output json or yaml: one object, on stderr.
func (f failure) errorBody() ([]byte, error) {
	type detail struct {
		Code       string `json:"code"`
		Message    string `json:"message"`
		HTTPStatus int    `json:"http_status,omitempty"`
		ExitCode   int    `json:"exit_code"`
	}
	return json.Marshal(map[string]detail{"error": {Code: f.code, Message: f.message, HTTPStatus: f.httpStatus, ExitCode: f.exit}})
}

// report prints err on w in the output format the command line asked for and returns its
// exit code.
func report(w io.Writer, err error, format string) int {
	f := classify(err)
	switch format {
	case "json", "yaml":
		body, jerr := f.errorBody()
		if jerr == nil {
			if format == "yaml" {
				jerr = writeYAML(w, body)
			} else {
				_, jerr = fmt.Fprintf(w, "%s\n", body)
			}
		}
		if jerr == nil {
			return f.exit
		}
	}
	fmt.Fprintln(w, "wfhost:", f.text())
	return f.exit
}

// markActions wraps every command's action so that its errors are told apart from
// urfave/cli's own (see actionError), and checks a client command's output flags before it
// sends anything. Every command's flag errors become usage errors (onUsageError).
func markActions(cmds []*cli.Command) {
	for _, cmd := range cmds {
		cmd.OnUsageError = onUsageError
		markActions(cmd.Subcommands)
		action := cmd.Action
		if action == nil {
			continue
		}
		prints := hasFlag(cmd.Flags, "output")
		cmd.Action = func(c *cli.Context) error {
			var err error
			if prints {
				err = checkOutput(c)
			}
			if err == nil {
				err = action(c)
			}
			if err != nil {
				return &actionError{err: err}
			}
			return nil
		}
	}
}

// onUsageError turns a flag urfave/cli could not parse into a usage error, instead of the
// whole help page it prints by default, and points at the help.
func onUsageError(c *cli.Context, err error, _ bool) error {
	var words []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != c.App.Name {
			words = append([]string{x.Command.Name}, words...)
		}
	}
	return usagef("%s (see %s --help)", strings.TrimSpace(err.Error()), strings.Join(append([]string{c.App.Name}, words...), " "))
}
