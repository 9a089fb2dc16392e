package host

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wfhost/wfhost/abi"
)

// Deliver sends req under the policy o from outside any activation: the engine's webhook
// dispatcher (completion hooks) goes through the same door as a step's http_request, so a
// webhook obeys the tenant's allowlist, the private-address refusal, the size and time bounds
// and the redirect checks exactly as the tenant's guests do. A nil policy refuses. It
// returns the response, or an ErrorInfo whose code (abi.CodeHTTPDenied, abi.CodeHTTPTooLarge,
// abi.CodeHTTPTimeout, ...) says why there is none. Safe for concurrent use.
func (o *Outbound) Deliver(ctx context.Context, req abi.HTTPRequest) (status int, header http.Header, body []byte, refused *abi.ErrorInfo) {
	st := &state{outbound: o, inStep: true}
	resp, refused := st.sendHTTP(ctx, req, len(req.Body))
	if refused != nil {
		return 0, nil, nil, refused
	}
	return resp.status, resp.header, resp.body, nil
}

// WebhookAllowed reports whether the tenant's allowlist allowHosts lets a request reach
// rawURL, by the rule Deliver applies (ABI.md §4.11): the API refuses a webhook the policy
// would refuse at once, rather than record it failed at its first delivery. Private addresses
// are Deliver's to refuse, when it dials.
func WebhookAllowed(allowHosts []string, rawURL string) error {
	_, t, err := readURL(rawURL)
	if err != nil {
		return err
	}
	if _, ok := match(compileAllowlist(allowHosts), t); !ok {
		return fmt.Errorf("%s://%s is not in the tenant's outbound allowlist", t.scheme, t.hostport())
	}
	return nil
}
