package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/wfhost/wfhost/engine"
)

// telemetryFlags are the daemon's tracing flags. The endpoint also reads the standard
// OTEL_EXPORTER_OTLP_ENDPOINT, so a collector set up for other services needs nothing new.
func telemetryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name: "otlp-endpoint", EnvVars: []string{"WFHOST_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"},
			Usage: "OTLP/HTTP collector base URL (e.g. http://127.0.0.1:4318); spans go to its /v1/traces. Unset: no tracing",
		},
	}
}

// otlpTracesURL is the traces URL of an OTLP base endpoint, as the OpenTelemetry spec defines
// OTEL_EXPORTER_OTLP_ENDPOINT: the signal's path appended to the base.
func otlpTracesURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("--otlp-endpoint %q: %w", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL with a host, such as http://127.0.0.1:4318", base)
	}
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// newTracerProvider exports the engine's spans over OTLP/HTTP when an endpoint is set, and
// otherwise returns a provider that makes none. The returned shutdown flushes what is queued.
// instance names this host in the spans' resource.
func newTracerProvider(ctx context.Context, base, instance string) (trace.TracerProvider, func(context.Context) error, error) {
	if base == "" {
		return nil, func(context.Context) error { return nil }, nil
	}
	endpoint, err := otlpTracesURL(base)
	if err != nil {
		return nil, nil, err
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, nil, fmt.Errorf("otlp exporter: %w", err)
	}
	if instance == "" {
		instance, _ = os.Hostname()
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		// Gives each run's workflow.run span the ids its other spans name as their parent.
		sdktrace.WithIDGenerator(engine.TraceIDGenerator()),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", "wfhost"),
			attribute.String("service.instance.id", instance),
			attribute.String("service.version", version()),
		)),
	)
	return tp, tp.Shutdown, nil
}
