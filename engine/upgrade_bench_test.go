package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// gatePopulation is how many open runs BenchmarkUpgradeGate checks: the figure.
const gatePopulation = 10_000

// populate writes n open onboarding runs on digest straight into the harness's schema, at
// three points of the workflow in turn: asleep before the welcome mail (2 entries), retrying
// the welcome mail (3) and waiting for verification (4). Written by SQL, not run: the
// benchmark times the gate, not the 10,000 activations that would journal them.
func populate(b *testing.B, h *harness, digest string, n int) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{h.schema}.Sanitize()); err != nil {
		b.Fatal(err)
	}
	_, err = conn.Exec(ctx, `
WITH r AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, retention_days, available_at)
    SELECT $1, 'onboarding', '1', $2, 'running',
        jsonb_build_object('email', 'user' || g || '@example.com', 'delayMs', 3600000, 'verifyTimeoutMs', 3600000),
        30, now() + interval '1 hour'
    FROM generate_series(1, $3) g
    RETURNING id
), n AS (
    SELECT id, (row_number() OVER (ORDER BY id)) % 3 AS point FROM r
)
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, attempt, wake_at, event, match, started_at, completed_at)
SELECT n.id, $1, v.seq, v.key, v.kind, v.status, v.output, 1, v.wake_at, v.event, v.match, now(), v.completed_at
FROM n CROSS JOIN LATERAL (VALUES
    (0, 'create-user', 'run', 'completed', '{"id":"u-1","email":"user@example.com"}'::jsonb, NULL::timestamptz, NULL::text, NULL::jsonb, now()),
    (1, 'welcome-delay', 'sleep', CASE WHEN n.point = 0 THEN 'sleeping' ELSE 'completed' END, NULL, now() + interval '1 hour', NULL, NULL,
        CASE WHEN n.point = 0 THEN NULL ELSE now() END),
    (2, 'send-welcome', 'run', CASE WHEN n.point = 1 THEN 'retrying' ELSE 'completed' END, CASE WHEN n.point = 1 THEN NULL ELSE '"sent"'::jsonb END,
        NULL, NULL, NULL, CASE WHEN n.point = 1 THEN NULL ELSE now() END),
    (3, 'await-verify', 'wait', 'waiting', NULL, now() + interval '1 hour', 'verify', '{"userId":"u-1"}'::jsonb, NULL)
) AS v(seq, key, kind, status, output, wake_at, event, match, completed_at)
WHERE v.seq <= n.point + 1`, store.DefaultTenant, digest, n)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE runs; ANALYZE steps"); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUpgradeGate times the upgrade gate over 10,000 open runs at three points of the
// onboarding workflow (Postgres store, standard Go guest), with the policy check: a module
// with a step renamed (a third of the runs pass) and one with a step appended (all pass).
// It reports the runs checked per second and the seconds per 10,000. The executor is not
// started: the runs stay where they were written.
func BenchmarkUpgradeGate(b *testing.B) {
	for _, module := range []string{"examples_renamed.wasm", "examples_appended.wasm"} {
		b.Run(module, func(b *testing.B) {
			if testing.Short() {
				b.Skip("10,000 runs")
			}
			h := setup(b, harnessOptions{noStart: true})
			old := h.deploy("examples.wasm", false).Module.Digest
			populate(b, h, old, gatePopulation)
			wasm := fixture(b, module)
			ctx := context.Background()
			var (
				total time.Duration
				rep   *engine.UpgradeReport
			)
			for b.Loop() {
				began := time.Now()
				res, err := h.engine.DeployWith(ctx, store.DefaultTenant, wasm, engine.DeployOptions{Replace: true, Upgrade: engine.UpgradeCheck})
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(began)
				rep = res.Upgrade
			}
			if rep.Checked != gatePopulation || rep.Verdicts[engine.GateError] != 0 || rep.Verdicts[engine.GateFails] != 0 {
				b.Fatalf("report: checked %d, verdicts %v", rep.Checked, rep.Verdicts)
			}
			b.Logf("%s: %d runs checked, verdicts %v, %d ms", module, rep.Checked, rep.Verdicts, rep.DurationMs)
			// Once, outside the timed loop: the same deploy with upgrade, which moves the runs
			// that pass in one transaction (and so cannot be repeated on the same runs).
			began := time.Now()
			res, err := h.engine.DeployWith(ctx, store.DefaultTenant, wasm, engine.DeployOptions{Replace: true, Upgrade: engine.UpgradeMove})
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%s with upgrade: %d moved, %d pinned, the whole deploy %d ms", module, res.Upgrade.Moved, res.Upgrade.Pinned, time.Since(began).Milliseconds())
			b.ReportMetric(float64(gatePopulation*b.N)/total.Seconds(), "runs/s")
			b.ReportMetric(total.Seconds()/float64(b.N), "s/10k")
		})
	}
}
