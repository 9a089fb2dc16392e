package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The contract test: every API test's server (setupEnvOn) answers through contract, which
// checks each response to a documented route against api/openapi.json with a real OpenAPI
// validator (kin-openapi): its status must be one the operation documents, and its body must
// match the documented schema. A response the document does not describe fails the test that
// provoked it, whichever test that is (issue 17, point 3).

var contractRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("openapi.json"))
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	doc.Servers = nil // match any host: the test servers listen on loopback ports
	return gorillamux.NewRouter(doc)
})

// TestOpenAPIDocumentIsValid: the document loads and validates (the lint the contract rests on).
func TestOpenAPIDocumentIsValid(t *testing.T) {
	if _, err := contractRouter(); err != nil {
		t.Fatal(err)
	}
}

// contract serves next and checks each of its responses against the document.
func contract(t testing.TB, next http.Handler) http.Handler {
	if _, err := contractRouter(); err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if err := checkResponse(r, rec); err != nil {
			t.Errorf("%v", err)
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// checkResponse is nil when rec, the answer to r, is one the document describes, or r is to a
// path or method the API does not serve (whose 404 or 405 is the mux's, not an operation's).
func checkResponse(r *http.Request, rec *httptest.ResponseRecorder) error {
	router, err := contractRouter()
	if err != nil {
		return err
	}
	route, params, err := router.FindRoute(r)
	if err != nil {
		return nil
	}
	opts := &openapi3filter.Options{ExcludeRequestBody: true, ExcludeRequestQueryParams: true,
		IncludeResponseStatus: true, MultiError: true,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.EnableJSONSchema2020()}}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code,
		Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: opts}
	if err := openapi3filter.ValidateResponse(r.Context(), out); err != nil {
		return fmt.Errorf("%s %s answered %d, which the OpenAPI document does not describe: %v\nbody: %.300s",
			r.Method, r.URL.Path, rec.Code, strings.ReplaceAll(err.Error(), "\n", " "), rec.Body.String())
	}
	return nil
}

// TestContractCatchesAnUndocumentedResponse: the check bites. A status no operation
// documents, a body off its schema, and a 401 without the challenge header the document
// requires are caught; a documented answer is not.
func TestContractCatchesAnUndocumentedResponse(t *testing.T) {
	answer := func(method, path string, status int, body string) error {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(status)
		rec.WriteString(body)
		return checkResponse(httptest.NewRequest(method, path, nil), rec)
	}
	if err := answer("GET", "/v1/workflows/steps/runs/00000000-0000-4000-8000-000000000000", 418, `{}`); err == nil {
		t.Error("a 418 passed")
	}
	if err := answer("GET", "/v1/workflows/steps/runs/00000000-0000-4000-8000-000000000000", 200, `{"id": 7}`); err == nil {
		t.Error("a run whose id is a number passed")
	}
	if err := answer("GET", "/v1/workflows/steps/runs/00000000-0000-4000-8000-000000000000", 401,
		`{"error":{"code":"unauthorized","message":"no token"}}`); err == nil {
		t.Error("a 401 without its WWW-Authenticate challenge passed")
	}
	if err := answer("GET", "/v1/workflows/steps/runs/00000000-0000-4000-8000-000000000000", 404,
		`{"error":{"code":"not_found","message":"no such run"}}`); err != nil {
		t.Errorf("a documented 404: %v", err)
	}
}
