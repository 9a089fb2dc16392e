package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/wfhost/wfhost/api/wire"
)

// Client talks to one wfhost daemon. Safe for concurrent use.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// Error is an API error answer (wire.ErrorBody) with its HTTP status.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Detail())
}

// Detail is Message without the words of Code said again: the server's messages wrap its
// sentinel errors ("conflict: workflow ...", "create tenant t: conflict: it exists", "run r:
// not found"), and "conflict (HTTP 409): conflict: workflow ..." says it twice. The first
// repetition goes, at the start, in the middle or at the end.
func (e *Error) Detail() string {
	words := strings.ReplaceAll(e.Code, "_", " ")
	msg, lower := e.Message, strings.ToLower(e.Message)
	switch {
	case words == "":
	case strings.HasPrefix(lower, words+": "):
		msg = msg[len(words)+2:]
	case strings.Contains(lower, ": "+words+": "):
		i := strings.Index(lower, ": "+words+": ")
		msg = msg[:i] + msg[i+len(words)+2:]
	case strings.HasSuffix(lower, ": "+words):
		msg = msg[:len(msg)-len(words)-2]
	}
	return msg
}

// Do sends a request and returns the raw JSON response body, which decodes into the answer's
// type in package wire; a non-2xx status is an *Error.
// body may be nil, []byte (a module, sent as is with Content-Type application/wasm) or any
// other value (sent as JSON with Content-Type application/json, which the API requires).
func (c *Client) Do(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
		contentType = "application/wasm"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		var e wire.ErrorBody
		if json.Unmarshal(out, &e) != nil || e.Error.Code == "" {
			return nil, &Error{Status: resp.StatusCode, Code: "http_error", Message: strings.TrimSpace(string(out))}
		}
		return nil, &Error{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	return out, nil
}

// RunPath is the API path of a run.
func RunPath(workflow, runID string) string {
	return "/v1/workflows/" + url.PathEscape(workflow) + "/runs/" + url.PathEscape(runID)
}
