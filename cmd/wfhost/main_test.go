package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/host"
)

// TestMain lets the host runtime start this test binary as its compile worker.
func TestMain(m *testing.M) {
	host.ServeCompileWorkerIfAsked()
	os.Exit(m.Run())
}

// TestVersion: `wfhost --version` prints the program's name and this build's version and
// succeeds, before any command runs.
func TestVersion(t *testing.T) {
	app := newApp()
	var out bytes.Buffer
	app.Writer = &out
	if err := app.Run([]string{"wfhost", "--version"}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out.String()), "wfhost version "+version(); got != want {
		t.Fatalf("--version printed %q, want %q", got, want)
	}
	if v := version(); v == "" || strings.ContainsAny(v, " \n") {
		t.Fatalf("version %q: want one word", v)
	}
}
