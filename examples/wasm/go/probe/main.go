package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
	"unsafe"
)

func main() {}

// Input is one cell of the matrix.
type Input struct {
	// Secret names the tenant secret whose value is the payload.
	Secret string `json:"secret"`
	// Raw is the payload itself when Secret is empty, written verbatim (base64 in the JSON).
	Raw []byte `json:"raw"`
	// Where the payload goes: step-output, step-error, run-output, run-error, wait-match,
	// wait-event, step-name, sleep-name, wait-name, log, stdout, stderr, http-host-refused,
	// http-host-allowed, http-path-refused, http-path-allowed.
	Where string `json:"where"`
	// Enc is how a secret is written: in JSON, raw (between quotes as it is), std (JSON
	// escaping), u (every character as a \u escape), u-mixed (the same with the hex digits in
	// mixed case); in a URL path, raw, pct (every byte percent-encoded) or pct-mixed.
	Enc string `json:"enc"`
	// Offsets, for log, stdout and stderr, places the payload across the host's 4 KiB line cut:
	// one line for each, with that many of the payload's bytes before the cut.
	Offsets []int `json:"offsets"`
	// URL is the base URL of an allowed server, for http-path-allowed.
	URL string `json:"url"`
}

// lineCut is where the host cuts a log line or an output line.
const lineCut = 4 << 10

func probe(in Input) {
	p := in.Raw
	if in.Secret != "" {
		p = readSecret(in.Secret)
	}
	switch in.Where {
	case "step-output", "step-error", "log", "stdout", "stderr",
		"http-host-refused", "http-host-allowed", "http-path-refused", "http-path-allowed":
		leakInStep(in, p)
	case "run-output":
		complete(in.json(p, `{%[1]s: [%[1]s]}`))
		return
	case "run-error":
		fail(in.json(p, `{"code": %[1]s, "message": %[1]s, "details": {%[1]s: %[1]s}}`))
		return
	case "wait-match":
		opts := `{"event": "probe-event", "match": ` + string(in.json(p, `{%[1]s: %[1]s}`)) + `, "timeoutMs": 1}`
		waitEvent([]byte("match"), []byte(opts))
	case "wait-event":
		waitEvent([]byte("event"), in.json(p, `{"event": %[1]s, "timeoutMs": 1}`))
	case "step-name":
		if status, _ := stepRun(p); status == statusExecute {
			stepDone(0, []byte("1"))
		}
	case "sleep-name":
		take(hostSleep(addr(p), uint32(len(p)), 0))
	case "wait-name":
		waitEvent(p, []byte(`{"event": "probe-event", "timeoutMs": 1}`))
	default:
		failWith("no such place: " + in.Where)
		return
	}
	complete([]byte(`"done"`))
}

// readSecret runs the step "read", which reads the secret and returns it as its output, the way
// an SDK does: the rest of the pass uses the value decoded from the JSON it sent, or on a
// replay from the journal, which holds it redacted. Either way a name made from it gets the
// same journal key.
func readSecret(name string) []byte {
	status, data := stepRun([]byte("read"))
	if status == statusExecute {
		v := secretGet(name)
		out, _ := json.Marshal(string(v))
		stepDone(0, out)
		return v
	}
	var s string
	_ = json.Unmarshal(data, &s)
	return []byte(s)
}

// leakInStep writes the payload from inside the step "leak", which reads the secret again
// itself (a step that runs in a later pass would not have the first one's).
func leakInStep(in Input, p []byte) {
	if status, _ := stepRun([]byte("leak")); status != statusExecute {
		return
	}
	if in.Secret != "" {
		p = secretGet(in.Secret)
	}
	switch in.Where {
	case "step-output":
		stepDone(0, in.json(p, `{%[1]s: [%[1]s, {"n": %[1]s}]}`))
		return
	case "step-error":
		stepDone(1, in.json(p, `{"code": %[1]s, "message": %[1]s, "nonRetryable": true, "details": {%[1]s: %[1]s}}`))
		return
	case "log", "stdout", "stderr":
		for _, line := range in.lines(p) {
			switch in.Where {
			case "log":
				hostLog(0, addr(line), uint32(len(line)))
			case "stdout":
				_, _ = os.Stdout.Write(append(line, '\n'))
			default:
				_, _ = os.Stderr.Write(append(line, '\n'))
			}
		}
	case "http-host-refused", "http-host-allowed":
		request("http://" + string(p) + ".invalid/x")
	case "http-path-refused":
		request("http://refused.example/" + in.path(p))
	case "http-path-allowed":
		request(in.URL + "/" + in.path(p) + "?q=" + in.path(p))
	}
	stepDone(0, []byte("null"))
}

// json is the JSON the template makes with the payload as its string token, or the payload
// itself, verbatim, when the cell gives raw bytes.
func (in Input) json(p []byte, template string) []byte {
	if in.Secret == "" {
		return p
	}
	return []byte(fmt.Sprintf(template, jsonToken(p, in.Enc)))
}

// jsonToken is p as a JSON string in the encoding enc.
func jsonToken(p []byte, enc string) string {
	switch enc {
	case "std":
		b, _ := json.Marshal(string(p))
		return string(b)
	case "u", "u-mixed":
		var b strings.Builder
		b.WriteByte('"')
		i := 0
		for _, r := range string(p) {
			for _, u := range utf16(r) {
				hex := fmt.Sprintf("%04x", u)
				if enc == "u-mixed" {
					hex = mixCase(hex, i)
				}
				b.WriteString(`\u` + hex)
				i++
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	return `"` + string(p) + `"`
}

// utf16 is r as UTF-16 code units: a surrogate pair past the Basic Multilingual Plane.
func utf16(r rune) []rune {
	if r < 0x10000 {
		return []rune{r}
	}
	r -= 0x10000
	return []rune{0xD800 + r>>10, 0xDC00 + r&0x3FF}
}

// mixCase upper-cases every other hex letter, starting at a different one for each escape.
func mixCase(hex string, seed int) string {
	b := []byte(hex)
	for i := range b {
		if (i+seed)%2 == 0 {
			b[i] = strings.ToUpper(string(b[i]))[0]
		}
	}
	return string(b)
}

// path is p in a URL path, in the encoding enc.
func (in Input) path(p []byte) string {
	if in.Enc != "pct" && in.Enc != "pct-mixed" {
		return string(p)
	}
	var b strings.Builder
	for i, c := range p {
		hex := fmt.Sprintf("%02X", c)
		if in.Enc == "pct-mixed" {
			hex = strings.ToLower(hex)
			if i%2 == 0 {
				hex = strings.ToUpper(hex)
			}
		}
		b.WriteString("%" + hex)
	}
	return b.String()
}

// lines are the log lines of a cell: the payload in a sentence, or one line per offset with
// that many of its bytes before the cut.
func (in Input) lines(p []byte) [][]byte {
	if len(in.Offsets) == 0 {
		return [][]byte{append([]byte("the secret is "), p...)}
	}
	var out [][]byte
	for _, o := range in.Offsets {
		line := []byte(strings.Repeat("x", max(0, lineCut-o)))
		out = append(out, append(append(line, p...), " (end)"...))
	}
	return out
}

func request(url string) {
	req, _ := json.Marshal(map[string]any{"method": "GET", "url": url, "timeoutMs": 2000})
	take(hostHTTPRequest(addr(req), uint32(len(req))))
}

func secretGet(name string) []byte {
	n := []byte(name)
	status, data := take(hostSecretGet(addr(n), uint32(len(n))))
	if status != statusOK {
		// Called only inside a step: end it with the host's error, then the run.
		stepDone(1, data)
		failWith("secret_get: " + string(data))
	}
	return data
}

func stepRun(name []byte) (int32, []byte) {
	return take(hostStepRun(addr(name), uint32(len(name)), 0, 0))
}

func stepDone(outcome uint32, data []byte) {
	take(hostStepDone(outcome, addr(data), uint32(len(data))))
}

func waitEvent(name, opts []byte) {
	take(hostWaitEvent(addr(name), uint32(len(name)), addr(opts), uint32(len(opts))))
}

func complete(out []byte) { hostComplete(addr(out), uint32(len(out))) }

func fail(info []byte) { hostFail(addr(info), uint32(len(info))) }

// failWith ends the pass with the probe's own error; the panic unwinds to wfhost_run.
func failWith(msg string) {
	b, _ := json.Marshal(map[string]string{"code": "probe", "message": msg})
	fail(b)
	panic(ended{})
}

type ended struct{}

const (
	statusOK      = 0
	statusExecute = 1
)

// The guest exports of abi/ABI.md §3.

//go:wasmexport wfhost_abi_version
func exportABIVersion() int32 { return 1 }

// allocations keeps the buffers handed to the host alive until the run that reads them.
var allocations = map[uint32][]byte{}

//go:wasmexport wfhost_alloc
func exportAlloc(size uint32) uint32 {
	b := make([]byte, size, size+1)
	p := addr(b[:cap(b)])
	allocations[p] = b
	return p
}

var description = []byte(`{"workflows": [{"name": "probe", "version": "1", "retry": {"attempts": 1}}]}`)

//go:wasmexport wfhost_describe
func exportDescribe() uint64 { return uint64(addr(description))<<32 | uint64(len(description)) }

//go:wasmexport wfhost_run
func exportRun(namePtr, nameLen, inputPtr, inputLen uint32) {
	input := allocations[inputPtr][:inputLen]
	clear(allocations)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(ended); !ok {
				panic(r)
			}
		}
	}()
	var in Input
	if err := json.Unmarshal(input, &in); err != nil {
		failWith("input: " + err.Error())
	}
	if !utf8.ValidString(in.Secret) {
		failWith("input: the secret's name is not UTF-8")
	}
	probe(in)
}

// The host imports of abi/ABI.md §4.

//go:wasmimport wfhost step_run
func hostStepRun(namePtr, nameLen, optsPtr, optsLen uint32) uint64

//go:wasmimport wfhost step_done
func hostStepDone(outcome, dataPtr, dataLen uint32) uint64

//go:wasmimport wfhost sleep
func hostSleep(namePtr, nameLen uint32, durationMs int64) uint64

//go:wasmimport wfhost wait_event
func hostWaitEvent(namePtr, nameLen, optsPtr, optsLen uint32) uint64

//go:wasmimport wfhost take
func hostTake(ptr, n uint32)

//go:wasmimport wfhost log
func hostLog(level, ptr, n uint32)

//go:wasmimport wfhost complete
func hostComplete(ptr, n uint32)

//go:wasmimport wfhost fail
func hostFail(ptr, n uint32)

//go:wasmimport wfhost http_request
func hostHTTPRequest(reqPtr, reqLen uint32) uint64

//go:wasmimport wfhost secret_get
func hostSecretGet(namePtr, nameLen uint32) uint64

// addr is the memory offset of b's first byte (0 for an empty slice).
func addr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// take collects the data a host reply left pending.
func take(reply uint64) (status int32, data []byte) {
	status, n := int32(uint32(reply)), uint32(reply>>32)
	if n > 0 {
		data = make([]byte, n)
		hostTake(addr(data), n)
	}
	return status, data
}
