package abi

import (
	"strings"
	"testing"
)

// A description's onEnd is checked hook by hook: statuses, exactly one target, a start's
// workflow a name, a webhook an http(s) URL with a host and no user information, and the
// number of hooks bounded; malformed and hostile values get a clear error.
func TestDecodeDescriptionOnEnd(t *testing.T) {
	t.Parallel()
	wf := func(onEnd string) string { return `{"workflows":[{"name":"w","version":"1","onEnd":` + onEnd + `}]}` }
	good := wf(`[{"when":["completed","failed"],"start":{"workflow":"next"}},` +
		`{"when":["cancelled"],"webhook":"https://hooks.example.com/in?x=1"}]`)
	d, err := DecodeDescription([]byte(good))
	if err != nil || len(d.Workflows[0].OnEnd) != 2 || d.Workflows[0].OnEnd[0].Start.Workflow != "next" {
		t.Fatalf("%+v %v", d, err)
	}
	many := "[" + strings.Repeat(`{"when":["failed"],"webhook":"https://a.example"},`, MaxHooks) + `{"when":["failed"],"webhook":"https://a.example"}]`
	for raw, fault := range map[string]string{
		wf(`[{"when":[],"webhook":"https://a.example"}]`):                                                         "when is empty",
		wf(`[{"when":["done"],"webhook":"https://a.example"}]`):                                                   `"done" is not one of`,
		wf(`[{"when":["failed","failed"],"webhook":"https://a.example"}]`):                                        "named twice",
		wf(`[{"when":["failed"]}]`):                                                                               "exactly one of start and webhook",
		wf(`[{"when":["failed"],"webhook":"https://a.example","start":{"workflow":"x"}}]`):                        "exactly one of start and webhook",
		wf(`[{"when":["failed"],"start":{"workflow":""}}]`):                                                       "start workflow name is empty",
		wf(`[{"when":["failed"],"start":{"workflow":"a/b"}}]`):                                                    `contains "/"`,
		wf(`[{"when":["failed"],"start":{"workflow":"x","version":"\u0000"}}]`):                                   "NUL",
		wf(`[{"when":["failed"],"webhook":"ftp://a.example/"}]`):                                                  "scheme must be http or https",
		wf(`[{"when":["failed"],"webhook":"https:///nohost"}]`):                                                   "has no host",
		wf(`[{"when":["failed"],"webhook":"https://user:pw@a.example/"}]`):                                        "user information",
		wf(`[{"when":["failed"],"webhook":"https://a.example/#frag"}]`):                                           "fragment",
		wf(`[{"when":["failed"],"webhook":"https://a.example/\u0007"}]`):                                          "character U+0007",
		wf(`[{"when":["failed"],"webhook":"https://a.example/` + strings.Repeat("p", MaxWebhookURLBytes) + `"}]`): "the limit is 2048",
		wf(many):                  "onEnd has 17 hooks, the limit is 16",
		wf(`{"when":["failed"]}`): "invalid JSON",
	} {
		if _, err := DecodeDescription([]byte(raw)); err == nil || !strings.Contains(err.Error(), fault) {
			t.Errorf("%.90q: error %v, want one containing %q", raw, err, fault)
		}
	}
	// JSON replaces bytes that are not UTF-8; a hook built in Go (the API's) may carry them.
	err = Hook{When: []string{"failed"}, Webhook: "https://a.example/\xff"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("a URL that is not UTF-8: %v", err)
	}
}
