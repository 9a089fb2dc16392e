package wftest_test

import (
	"os"
	"testing"

	"github.com/wfhost/wfhost/host"
)

// TestMain lets the host runtime start this test binary as its compile worker.
func TestMain(m *testing.M) {
	host.ServeCompileWorkerIfAsked()
	os.Exit(m.Run())
}
