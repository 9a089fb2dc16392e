package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// routeQuery lists the query parameters each route takes; a route not listed takes none. A
// name ending in ".*" stands for every parameter that starts with the name before it and then
// a dot or a [: input.* takes input.customer.id and input[customer][id] (inputFilter reads
// both forms, and refuses a malformed one).
var routeQuery = map[string][]string{
	"POST /v1/modules":                                    {"replace", "upgrade"},
	"POST /v1/workflows/{name}/runs":                      {"wait"},
	"GET /v1/workflows/{name}/runs":                       runListQuery,
	"GET /v1/runs":                                        runListQuery,
	"GET /v1/workflows/{name}/runs/counts":                runCountQuery,
	"GET /v1/runs/counts":                                 runCountQuery,
	"GET /v1/workflows/{name}/runs/{id}/steps":            {"limit", "cursor"},
	"GET /v1/workflows/{name}/runs/{id}/log":              {"limit", "cursor"},
	"GET /v1/workflows/{name}/runs/{id}/logs":             {"limit", "cursor"},
	"POST /v1/events/{event}":                             {"eventId"},
	"GET /v1/workflows/{name}/runs/{id}":                  {"wait"},
	"POST /v1/workflows/{name}/runs/{id}/signals/{event}": {"signalId"},
	"POST /v1/workflows/{name}/runs/{id}/cancel":          {"graceMs"},
	"GET /v1/schedules/{id}/next":                         {"count"},
	"POST /v1/workflows/{name}/pause":                     {"version"},
	"POST /v1/workflows/{name}/resume":                    {"version"},
	"GET /v1/hooks/deliveries":                            {"runId", "startedRunId", "status", "limit"},
}

var runListQuery = []string{"status", "version", "idempotencyKey", "parent", "since", "until", "cursor", "limit", "input.*"}

// runCountQuery is runListQuery without the page's parameters: counts are by status over every
// page.
var runCountQuery = []string{"version", "idempotencyKey", "parent", "since", "until", "input.*"}

// checkQuery refuses a query string that does not parse, a parameter the route does not take
// (a misspelt filter would otherwise filter nothing, silently) and a parameter given twice
// (which one would count?).
func checkQuery(r *http.Request, takes []string) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return badRequest("invalid_request", "the query string does not parse: "+err.Error())
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !takesParam(takes, name) {
			if len(takes) == 0 {
				return badRequest("invalid_request", fmt.Sprintf("unknown query parameter %q: this route takes none", name))
			}
			return badRequest("invalid_request", fmt.Sprintf("unknown query parameter %q: this route takes %s", name, strings.Join(takes, ", ")))
		}
		if n := len(q[name]); n > 1 {
			return badRequest("invalid_request", fmt.Sprintf("query parameter %q is given %d times", name, n))
		}
	}
	return nil
}

func takesParam(takes []string, name string) bool {
	for _, t := range takes {
		if base, ok := strings.CutSuffix(t, ".*"); ok && (strings.HasPrefix(name, base+".") || strings.HasPrefix(name, base+"[")) || t == name {
			return true
		}
	}
	return false
}
