package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestOTLPTracesURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":           "http://127.0.0.1:4318/v1/traces",
		"http://collector:4318/":          "http://collector:4318/v1/traces",
		"https://otel.example.com/prefix": "https://otel.example.com/prefix/v1/traces",
		"http://127.0.0.1:4318/v1/traces": "http://127.0.0.1:4318/v1/traces",
	} {
		got, err := otlpTracesURL(in)
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"127.0.0.1:4318", "grpc://x:4317", "http://", "::"} {
		if _, err := otlpTracesURL(bad); err == nil || !strings.Contains(err.Error(), "--otlp-endpoint") {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
}

// TestTracerProviderExportsOverOTLPHTTP: spans reach a collector's /v1/traces as protobuf.
func TestTracerProviderExportsOverOTLPHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	var body []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		body = append(body, b...)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()

	tp, shutdown, err := newTracerProvider(context.Background(), collector.URL, "test-host")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "workflow.run")
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "POST /v1/traces application/x-protobuf" {
		t.Fatalf("collector saw %q, want one protobuf POST to /v1/traces", got)
	}
	// The resource names the build: protobuf keeps strings as their bytes.
	for _, want := range []string{"service.version", version(), "service.instance.id", "test-host"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("the exported resource lacks %q", want)
		}
	}
}

func TestNoEndpointNoTracing(t *testing.T) {
	t.Parallel()
	tp, shutdown, err := newTracerProvider(context.Background(), "", "")
	if err != nil || tp != nil {
		t.Fatalf("provider %v, err %v; want none", tp, err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
