package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store/postgres"
)

// describedNames records the metric names of every collector registered on it.
type describedNames map[string]bool

func (d describedNames) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	for desc := range ch {
		if m := name.FindStringSubmatch(desc.String()); m != nil {
			d[m[1]] = true
		}
	}
	return nil
}

func (d describedNames) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = d.Register(c)
	}
}

func (d describedNames) Unregister(prometheus.Collector) bool { return false }

// TestOperatorKitNamesRealMetrics: every metric the Grafana dashboard and the alerting rules
// query is one the engine serves, so a renamed metric cannot leave them silently empty.
func TestOperatorKitNamesRealMetrics(t *testing.T) {
	t.Parallel()
	st, err := postgres.Open(context.Background(), postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_names"), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	served := describedNames{}
	if _, err := engine.New(engine.Config{Store: st, Runtime: runtimeForTests(t), Metrics: served}); err != nil {
		t.Fatal(err)
	}
	if len(served) < 15 {
		t.Fatalf("only %d metric names registered: %v", len(served), served)
	}
	metric := regexp.MustCompile(`\b(?:workflow|wfhost)_[a-z_]+`)
	for _, file := range []string{"deploy/grafana/wfhost.json", "deploy/prometheus/alerts.yml"} {
		b, err := os.ReadFile(filepath.Join(testenv.Root(), file))
		if err != nil {
			t.Fatal(err)
		}
		var unknown []string
		for _, name := range metric.FindAllString(string(b), -1) {
			base := name
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				base = strings.TrimSuffix(base, suffix)
			}
			if !served[name] && !served[base] {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			t.Errorf("%s queries metrics the engine does not serve: %v", file, unknown)
		}
	}
}
