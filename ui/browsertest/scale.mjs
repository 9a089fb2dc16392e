// Times the console against an embedded store of 100,000 runs (issue 18: "loads in under 1 s
// with 100k runs"). Not part of npm test: run it by hand, `node scale.mjs` (after make build;
// WFHOST_CONSOLE_BINARY names the binary, RUNS another count). It needs the sqlite3 CLI.
//
// It starts a daemon on a fresh data directory, runs one `steps` run to completion, stops the
// daemon and copies that run's row RUNS times in one INSERT (completed runs a second apart,
// every 50th failed, every 10th of version 2, with their own inputs and idempotency keys), then
// starts the daemon again on it and prints, for three rounds: the first list call, the counts
// (unfiltered and filtered), GET /v1/workflows, and in Chromium the console's first load (a
// navigation to /ui/ with the token in sessionStorage) to the list's rows and to the counts.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { chromium } from 'playwright-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = process.env.WFHOST_CONSOLE_BINARY || join(root, 'bin/wfhost');
const RUNS = Number(process.env.RUNS || 100000);
const token = 'scale-token';

const port = await new Promise((ok) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => ok(p)); }); });
const url = `http://127.0.0.1:${port}`;
const dir = mkdtempSync(join(tmpdir(), 'wfhost-scale-'));
const data = join(dir, 'data');

async function start() {
  const proc = spawn(bin, ['run', '--listen', `127.0.0.1:${port}`, '--data-dir', data, '--token', token,
    '--deploy', join(root, 'testdata/examples.wasm'), '--log-level', 'warn'], { stdio: 'ignore' });
  for (const deadline = Date.now() + 60000; ;) {
    try { if ((await fetch(`${url}/readyz`)).ok) return proc; } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error('daemon not ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function stop(proc) { const done = new Promise((r) => proc.once('exit', r)); proc.kill('SIGTERM'); await done; }
async function api(path, opts = {}) {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1${path}`, { ...opts, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...opts.headers } });
  const body = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return { body, ms: performance.now() - t0 };
}

let proc = await start();
const { body: template } = await api('/workflows/steps/runs', { method: 'POST', body: JSON.stringify({ input: { n: 2 } }) });
await api(`/workflows/steps/runs/${template.id}?wait=30`);
await stop(proc);

const db = join(data, readdirSync(data).find((f) => f.endsWith('.db') || f.endsWith('.sqlite')));
const cols = execFileSync('sqlite3', [db, "SELECT group_concat(name, ',') FROM pragma_table_info('runs')"]).toString().trim().split(',');
const set = {
  id: "printf('00000000-0000-4000-8000-%012d', n)",
  input: "json_object('i', n, 'customer', json_object('id', 'c' || (n % 1000)))",
  idempotency_key: "'key-' || n",
  version: "CASE WHEN n % 10 = 0 THEN '2' ELSE version END",
  status: "CASE WHEN n % 50 = 0 THEN 'failed' ELSE status END",
  created_at: 'created_at - n * 1000000', started_at: 'started_at - n * 1000000',
  completed_at: 'completed_at - n * 1000000', updated_at: 'updated_at - n * 1000000',
};
const t0 = performance.now();
execFileSync('sqlite3', [db, `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${RUNS})
  INSERT INTO runs (${cols.join(', ')}) SELECT ${cols.map((c) => set[c] || c).join(', ')} FROM runs, seq WHERE runs.id = '${template.id}'`]);
console.log(`inserted ${RUNS} runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

proc = await start();
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const ms = (n) => `${Math.round(n)} ms`;
try {
  for (let round = 1; round <= 3; round++) {
    const list = await api('/runs?limit=50');
    const counts = await api('/runs/counts');
    const filtered = await api('/runs/counts?version=2&since=2000-01-01T00:00:00Z');
    const byInput = await api('/runs/counts?input.customer.id=c7');
    const wfs = await api('/workflows');
    const byKey = await api('/runs?limit=50&idempotencyKey=key-99999');
    const byKeyWf = await api('/workflows/steps/runs?limit=50&idempotencyKey=key-99999');
    const byVersion = await api('/runs?limit=50&version=2');
    console.log(`round ${round}: GET /v1/runs?limit=50 ${ms(list.ms)} (${list.body.runs.length} runs); ` +
      `GET /v1/runs/counts ${ms(counts.ms)} (total ${counts.body.total}); ?version=2&since= ${ms(filtered.ms)} (${filtered.body.total}); ` +
      `?input.customer.id=c7 ${ms(byInput.ms)} (${byInput.body.total}); GET /v1/workflows ${ms(wfs.ms)}`);
    console.log(`round ${round}: GET /v1/runs?idempotencyKey= ${ms(byKey.ms)} (${byKey.body.runs.length}); the same of one workflow ${ms(byKeyWf.ms)} (${byKeyWf.body.runs.length}); ` +
      `GET /v1/runs?version=2 ${ms(byVersion.ms)} (${byVersion.body.runs.length})`);

    const context = await browser.newContext();
    await context.addInitScript((t) => sessionStorage.setItem('wfhost.token', t), token);
    const page = await context.newPage();
    const start = performance.now();
    await page.goto(`${url}/ui/#/runs`);
    await page.waitForFunction(() => document.querySelectorAll('table.runs tbody tr a').length === 50, null, { polling: 'raf' });
    const rows = performance.now() - start;
    await page.waitForFunction(() => /^\d+$/.test(document.querySelector('ul.counts a .n')?.textContent || ''), null, { polling: 'raf' });
    const filled = performance.now() - start;
    const nav = await page.evaluate(() => performance.now()); // the page's own clock, from its navigation
    console.log(`round ${round}: /ui first load to 50 rows drawn ${ms(rows)}, to the counts filled ${ms(filled)} (page clock at the counts: ${ms(nav)})`);
    await context.close();
  }
} finally {
  await browser.close();
  await stop(proc);
  rmSync(dir, { recursive: true, force: true });
}
