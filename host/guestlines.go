package host

import (
	"context"
	"regexp"
	"strings"
)

// A guest's stack trace (a Go panic or fatal error with its goroutines, a Rust panic with its
// backtrace, an uncaught exception's traceback) is one event, however many lines: one log
// record keeps it together in a log search and under the activation's record bound, where a
// record per line scattered it into dozens of WARN records among others'. Only traces are
// gathered; other lines stay one record each.

// maxTraceBytes bounds one stack trace's record; lines past it are dropped and the record
// says so (truncated).
const maxTraceBytes = 16 << 10

// stackTrace is the lines of a trace being gathered.
type stackTrace struct {
	lines     []string
	bytes     int
	truncated bool
}

// traceStart matches the first line of a stack trace.
var traceStart = regexp.MustCompile(`^(panic: |fatal error: |thread '[^']*' panicked|Traceback \(most recent call last\)|goroutine \d+ \[|stack backtrace:|wasm backtrace:|Uncaught |RuntimeError: )`)

// traceLine matches a line that continues a trace: blank, indented, a Go frame's function
// (main.main(), main.(*T).f(...)), or one of the runtimes' headers within a trace.
var traceLine = regexp.MustCompile(`^(\s|$|goroutine \d+ \[|created by |\[signal |stack backtrace:|note: |exit status |panic: |fatal error: |[\w./*()\[\]{}$-]+\(.*\)$)`)

// record logs line, or gathers it into the trace it starts or continues.
func (w *lineLogger) record(line string) {
	if len(w.trace.lines) > 0 && traceLine.MatchString(line) {
		w.trace.add(line)
		return
	}
	w.emitTrace()
	if traceStart.MatchString(line) {
		w.trace.add(line)
		return
	}
	w.logger.Log(context.Background(), w.level, line, append(w.attrs(), "stream", w.stream)...)
}

func (t *stackTrace) add(line string) {
	if t.truncated || t.bytes+len(line)+1 > maxTraceBytes {
		t.truncated = true
		return
	}
	t.lines = append(t.lines, line)
	t.bytes += len(line) + 1
}

// emitTrace logs the trace gathered, if any, as one record.
func (w *lineLogger) emitTrace() {
	t := w.trace
	if len(t.lines) == 0 {
		return
	}
	w.trace = stackTrace{}
	attrs := append(w.attrs(), "stream", w.stream, "stack_trace", true, "lines", len(t.lines))
	if t.truncated {
		attrs = append(attrs, "truncated", true)
	}
	w.logger.Log(context.Background(), w.level, strings.TrimRight(strings.Join(t.lines, "\n"), "\n"), attrs...)
}
