// Starts a wfhost daemon for the browser tests: built from this tree (or WFHOST_CONSOLE_BINARY),
// on the embedded store in a fresh directory, with the example workflows deployed, a known
// tenant token and admin token, on a free port.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
    s.on('error', fail);
  });
}

export async function startDaemon() {
  const dir = mkdtempSync(join(tmpdir(), 'wfhost-console-'));
  let bin = process.env.WFHOST_CONSOLE_BINARY;
  if (!bin) {
    bin = join(dir, 'wfhost');
    execFileSync('go', ['build', '-o', bin, './cmd/wfhost'], { cwd: root, env: { ...process.env, GOWORK: 'off' }, stdio: 'inherit' });
  }
  const port = await freePort();
  const token = 'console-test-tenant-token';
  const admin = 'console-test-admin-token';
  const args = ['run', '--listen', `127.0.0.1:${port}`, '--data-dir', join(dir, 'data'), '--token', token,
    '--admin-token', admin, '--deploy', join(root, 'testdata/examples.wasm'), '--log-format', 'json', '--log-level', 'warn'];
  const proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (b) => { log += b; });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`wfhost exited with ${proc.exitCode}:\n${log}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`wfhost not ready after 60s:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url, token, admin,
    log: () => log,
    // api calls the REST API with the tenant token, for setting up and checking scenarios.
    async api(method, path, body) {
      const res = await fetch(`${url}/v1${path}`, {
        method, headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const data = await res.json();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
      return data;
    },
    async stop() {
      if (proc.exitCode === null) {
        const done = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
        await done;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
