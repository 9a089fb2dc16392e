// Browser tests of the console: Playwright drives Debian's Chromium (headless) against a wfhost
// daemon built from this tree, on the embedded store, with the example workflows deployed.
// Run them with `make test/console` (or `npm test` here after `npm ci`). CHROMIUM names another
// browser binary; WFHOST_CONSOLE_SCREENSHOTS=<dir> saves the README's two screenshots there.
import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startDaemon } from './daemon.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const shots = process.env.WFHOST_CONSOLE_SCREENSHOTS;
const TIMEOUT = 15000;

let daemon, browser, context, page, problems;

before(async () => {
  daemon = await startDaemon();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    // Containers and CI run as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
});

// Each test has its own context, so its own sessionStorage: it signs in afresh.
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(TIMEOUT);
  page = await context.newPage();
  problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  // The console makes no request beyond the daemon: no CDN, no web font.
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== daemon.url && u.protocol !== 'data:') problems.push(`external request: ${r.url()}`);
  });
});

afterEach(async () => {
  await context.close();
  assert.deepEqual(problems, [], 'the page logged errors or reached outside the daemon');
});

async function signIn(token = daemon.token) {
  await page.goto(`${daemon.url}/ui/`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  if (token === daemon.admin) {
    // Sign-in tries the token on a tenant route first; Chromium logs the 401 the admin token
    // gets there, which is the expected answer, not a fault of the page.
    problems = problems.filter((p) => !p.includes('status of 401'));
  }
}

// statusOfRun is the run page's status badge.
const runStatus = () => page.locator('dl.facts dd .badge').first();

// waitingOnboarding starts an onboarding run through the API and returns it once it waits for
// its verify event, with the user id the event must carry.
async function waitingOnboarding(email, extra = {}) {
  const run = await daemon.api('POST', '/workflows/onboarding/runs', { input: { email, delayMs: 300, verifyTimeoutMs: 600000, ...extra } });
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const { steps } = await daemon.api('GET', `/workflows/onboarding/runs/${run.id}/steps`);
    const wait = steps.find((s) => s.kind === 'wait' && s.status === 'waiting');
    if (wait) return { run, userId: wait.match.userId };
    if (Date.now() > deadline) throw new Error(`run ${run.id} never waited: ${JSON.stringify(steps)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('start a run from the console and watch it complete on the timeline', async () => {
  await signIn();
  await page.getByRole('button', { name: 'Start a run' }).click();
  const dialog = page.getByRole('dialog', { name: 'Start a run' });
  await dialog.getByLabel('Workflow').selectOption('steps');
  await dialog.getByLabel('Input (JSON)').fill('{"n": 3, "sleepMs": 400}');
  await dialog.getByRole('button', { name: 'Start', exact: true }).click();

  await page.waitForURL(/#\/runs\/steps\//);
  const steps = page.getByRole('list', { name: 'Journal entries in order' }).locator(':scope > li');
  // While it runs, the timeline grows: a sleep shows until when it sleeps.
  await page.getByText(/SLEEP/i).first().waitFor();
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  await page.waitForFunction(() => document.querySelectorAll('ol.steps > li').length === 5);
  assert.deepEqual(await steps.locator('.key').allTextContents(), ['s', 'pause', 's#1', 'pause#1', 's#2']);
  assert.match(await page.getByRole('figure', { name: 'Output' }).textContent(), /"sum": 3/);
  // The console's start is a client's (its triggeredBy).
  assert.match(await page.locator('dl.facts').first().locator('div', { hasText: 'Triggered by' }).textContent(), /Triggered bya client/);

  // A step opens to its output, formatted.
  await steps.first().locator('summary').click();
  assert.match(await steps.first().locator('figure', { hasText: 'Output' }).textContent(), /0/);
});

test('signal a waiting run from the console', async () => {
  // The welcome mail fails twice first: the timeline shows its attempts.
  const { run, userId } = await waitingOnboarding('signal@example.com', { failWelcome: 2 });
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  await page.getByText(/waiting for event “verify” matching .*until/).waitFor();

  await page.getByRole('button', { name: 'Send a signal…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Send a signal' });
  // The form starts from what the run waits for.
  assert.equal(await dialog.getByLabel('Event').inputValue(), 'verify');
  assert.deepEqual(JSON.parse(await dialog.getByLabel('Payload (JSON)').inputValue()), { userId });
  await dialog.getByLabel('Payload (JSON)').fill(JSON.stringify({ userId, via: 'console' }));
  await dialog.getByRole('button', { name: 'Send signal' }).click();

  await page.getByRole('status').filter({ hasText: 'Signal verify: delivered' }).waitFor();
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  assert.match(await page.getByRole('figure', { name: 'Output' }).textContent(), /verified via console/);
  assert.match(await page.locator('ol.steps > li', { hasText: 'send-welcome' }).textContent(), /3 attempts/);
  if (shots) {
    await page.locator('ol.steps > li', { hasText: 'await-verify' }).locator('summary').click();
    await page.locator('#toast').evaluate((el) => { el.hidden = true; });
    await page.screenshot({ path: join(shots, 'console-run.png'), fullPage: true });
  }
});

test('the lifecycle log panel shows what happened to the run, and grows while it runs', async () => {
  // The welcome mail fails once first: the log shows the retried attempt.
  const { run, userId } = await waitingOnboarding('lifelog@example.com', { failWelcome: 1 });
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  const log = page.getByRole('table', { name: /Every change of the run/ });
  await log.locator('tr[data-kind="suspended"]', { hasText: '"why":"wait"' }).waitFor();
  // Sent while the page is open: the refresh appends the new entries.
  await daemon.api('POST', `/workflows/onboarding/runs/${run.id}/signals/verify`, { userId, via: 'log' });
  await log.locator('tr[data-kind="ended"]').waitFor();
  const kinds = await log.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.kind));
  assert.equal(kinds[0], 'created');
  assert.equal(kinds[kinds.length - 1], 'ended');
  for (const k of ['step_retrying', 'suspended', 'event_delivered', 'woken']) assert.ok(kinds.includes(k), `no ${k} in ${kinds}`);
  // Each entry carries its own time. The exact times (the datetime attribute) are compared, not
  // the shown text: a run that is created, signalled and ended within one second shows one
  // second on every row.
  const times = await log.locator('tbody tr td:first-child time').evaluateAll((els) => els.map((e) => e.getAttribute('datetime')));
  assert.equal(times.length, kinds.length, `every entry has its time: ${times}`);
  assert.ok(times.every((t) => !Number.isNaN(Date.parse(t))), `times that do not parse: ${times}`);
  assert.ok(new Set(times).size > 1, `the entries have their own times, not one repeated: ${times}`);
});

test('a failed run shows its attempts and the error that ended it', async () => {
  // The welcome mail fails on every one of its 5 attempts (20 ms apart): the step and the run fail.
  const run = await daemon.api('POST', '/workflows/onboarding/runs', { input: { email: 'fails@example.com', delayMs: 10, failWelcome: 99 } });
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  await runStatus().filter({ hasText: 'failed' }).waitFor();
  const step = page.locator('ol.steps > li', { hasText: 'send-welcome' });
  assert.match(await step.locator('summary').textContent(), /failed.*5 attempts/);
  await step.locator('summary').click();
  assert.match(await step.getByRole('figure', { name: 'Error' }).textContent(), /"code": "smtp_unavailable"/);
  assert.match(await page.locator('section.io').getByRole('figure', { name: 'Error' }).textContent(), /smtp_unavailable/);
});

test('a retried step shows a bar per attempt and the backoffs between them', async () => {
  // The welcome mail fails twice, then goes: three attempts, two backoffs of 20 ms.
  const { run } = await waitingOnboarding('attempts@example.com', { failWelcome: 2 });
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  const step = page.locator('ol.steps > li', { hasText: 'send-welcome' });
  await step.locator('.track .bar.attempt').nth(2).waitFor({ state: 'attached' });
  assert.deepEqual(await step.locator('.track .bar.attempt').evaluateAll((bars) => bars.map((b) => [b.dataset.attempt, b.className])),
    [['1', 'bar attempt k-run st-failed'], ['2', 'bar attempt k-run st-failed'], ['3', 'bar attempt k-run st-completed']]);
  assert.equal(await step.locator('.track .bar.backoff').count(), 2);
  // Each bar starts where the one before it ended, in order along the track.
  const lefts = await step.locator('.track .bar').evaluateAll((bars) => bars.map((b) => parseFloat(b.style.left)));
  assert.deepEqual([...lefts].sort((a, b) => a - b), lefts);
  // The bars are drawn for the eye; the table says the same in words.
  await step.locator('summary').click();
  const table = step.getByRole('table', { name: 'Attempts of send-welcome' });
  const rows = await table.locator('tbody tr').allTextContents();
  assert.equal(rows.length, 3);
  assert.match(rows[0], /failed: smtp_unavailable \(mail server refused attempt 1\)/);
  assert.match(rows[1], /failed: smtp_unavailable \(mail server refused attempt 2\)/);
  assert.match(rows[2], /completed/);
});

test('replay a run against a module file: the same build is compatible, a renamed step diverges', async () => {
  const { run } = await waitingOnboarding('replay@example.com');
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  const tools = page.getByRole('region', { name: 'Replay and query' });
  const result = tools.getByRole('status').first();

  await tools.getByLabel('Module (.wasm)').setInputFiles(join(root, 'testdata/examples.wasm'));
  await tools.getByRole('button', { name: 'Replay against this module' }).click();
  await result.getByText('Compatible').waitFor({ timeout: 90000 });
  assert.match(await result.textContent(), /Replayed3 of 4 journal entries/);
  assert.match(await result.textContent(), /Stops atentry 3: wait “await-verify” for event “verify”, not ended yet/);

  await tools.getByLabel('Module (.wasm)').setInputFiles(join(root, 'testdata/examples_renamed.wasm'));
  await tools.getByRole('button', { name: 'Replay against this module' }).click();
  // The renamed build is compiled first: a Go module of 5 MB, slow on a busy machine.
  await result.getByText('Diverged').waitFor({ timeout: 90000 });
  const text = await result.textContent();
  assert.match(text, /Diverged at journal entry 2: examples_renamed.wasm would not replay this run/);
  assert.match(text, /Expectedrun “send-welcome”/);
  assert.match(text, /Reachedrun “send-greeting”/);

  // A file that is not a module is refused with the API's reason.
  await tools.getByLabel('Module (.wasm)').setInputFiles({ name: 'notes.wasm', mimeType: 'application/wasm', buffer: Buffer.from('not a module \xff') });
  await tools.getByRole('button', { name: 'Replay against this module' }).click();
  await result.getByText(/Replay refused: .*/).waitFor();
  // Chromium logs the 400 the API answered, which is what the test asked for.
  problems = problems.filter((p) => !p.includes('status of 400'));

  // Nothing changed: the run still waits on its own module.
  const after = await daemon.api('GET', `/workflows/onboarding/runs/${run.id}`);
  assert.equal(after.status, 'running');
  assert.equal(after.moduleDigest, run.moduleDigest);
});

test('query a live run from its page, and see the answer or the error', async () => {
  const { run } = await waitingOnboarding('query@example.com');
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  const tools = page.getByRole('region', { name: 'Replay and query' });
  const form = tools.getByRole('form', { name: 'Query this run' });
  await form.waitFor();
  await form.getByLabel('Query name').fill('status');
  await form.getByLabel('Argument (JSON)').fill('{"asked": "from the console"}');
  await form.getByRole('button', { name: 'Send query' }).click();
  const answer = tools.getByRole('figure', { name: 'Answer to status' });
  await answer.waitFor();
  const body = JSON.parse(await answer.locator('code').textContent());
  assert.equal(body.stage, 'awaiting-verify');
  assert.deepEqual(body.arg, { asked: 'from the console' });

  // An argument that is not JSON is caught before it is sent; a query the workflow does not
  // answer shows the API's error.
  await form.getByLabel('Argument (JSON)').fill('{not json');
  await form.getByRole('button', { name: 'Send query' }).click();
  await tools.getByText(/The argument is not JSON/).waitFor();
  await form.getByLabel('Argument (JSON)').fill('null');
  await form.getByLabel('Query name').fill('no-such-query');
  await form.getByRole('button', { name: 'Send query' }).click();
  await tools.getByText(/Query failed \(unknown_query\)/).waitFor();
  problems = problems.filter((p) => !p.includes('status of 404'));

  // A run that has ended has no query form.
  const done = await daemon.api('POST', '/workflows/steps/runs?wait=30', { input: { n: 1 } });
  await page.goto(`${daemon.url}/ui/#/runs/steps/${done.id}`);
  await tools.getByText('The run has ended: it has no place to answer a query at.').waitFor();
  assert.equal(await tools.getByRole('form', { name: 'Query this run' }).isVisible(), false);
});

test('a run\'s guest logs appear on its page, each line once', async () => {
  // The welcome mail fails once: its callback runs twice and logs on the attempt that sends.
  const { run, userId } = await waitingOnboarding('guestlog@example.com', { failWelcome: 1 });
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  const table = page.getByRole('table', { name: /What the workflow logged/ });
  await table.locator('tbody tr').first().waitFor();
  assert.match(await table.locator('tbody tr').first().textContent(), /infosend-welcomewelcome mail sent to guestlog@example.com on attempt 2/);
  // Verified, the run ends after more activations that replay the journal: the line is not
  // logged again.
  await daemon.api('POST', `/workflows/onboarding/runs/${run.id}/signals/verify`, { userId });
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  assert.equal(await table.locator('tbody tr').count(), 1);

  // A run whose guest logs nothing says so.
  const quiet = await daemon.api('POST', '/workflows/timeouts/runs?wait=30', { input: { hangAttempts: 0, timeoutMs: 1000, attempts: 1 } });
  await page.goto(`${daemon.url}/ui/#/runs/timeouts/${quiet.id}`);
  await page.getByText('The guest has logged nothing.').waitFor();
});

test('cancel a run from the console, after confirming', async () => {
  const { run } = await waitingOnboarding('cancel@example.com');
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  await runStatus().filter({ hasText: 'running' }).waitFor();

  // By keyboard: Enter on the button opens the confirmation, Escape closes it and gives the
  // focus back; nothing is cancelled.
  const cancel = page.getByRole('button', { name: 'Cancel run…' });
  await cancel.focus();
  await page.keyboard.press('Enter');
  await page.getByRole('dialog', { name: 'Cancel this run?' }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Cancel run…');

  // Dismissing the confirmation changes nothing.
  await page.getByRole('button', { name: 'Cancel run…' }).click();
  await page.getByRole('dialog', { name: 'Cancel this run?' }).getByRole('button', { name: 'Cancel', exact: true }).click();
  assert.equal((await daemon.api('GET', `/workflows/onboarding/runs/${run.id}`)).status, 'running');

  await page.getByRole('button', { name: 'Cancel run…' }).click();
  await page.getByRole('dialog', { name: 'Cancel this run?' }).getByRole('button', { name: 'Cancel run' }).click();
  await runStatus().filter({ hasText: 'cancelled' }).waitFor();
  const ended = await daemon.api('GET', `/workflows/onboarding/runs/${run.id}`);
  assert.equal(ended.status, 'cancelled');
  assert.ok(ended.cancelRequestedAt, 'the run was asked to cancel itself, not terminated');
  assert.equal(ended.error.code, 'cancelled');
  assert.ok(await page.getByRole('button', { name: 'Cancel run…' }).isDisabled());
  assert.ok(await page.getByRole('button', { name: 'Terminate…' }).isDisabled());
});

test('terminate a run from the console, after confirming', async () => {
  const { run } = await waitingOnboarding('terminate@example.com');
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  await runStatus().filter({ hasText: 'running' }).waitFor();
  await page.getByRole('button', { name: 'Terminate…' }).click();
  await page.getByRole('dialog', { name: 'Terminate this run?' }).getByRole('button', { name: 'Terminate run' }).click();
  await runStatus().filter({ hasText: 'cancelled' }).waitFor();
  const ended = await daemon.api('GET', `/workflows/onboarding/runs/${run.id}`);
  assert.equal(ended.status, 'cancelled');
  assert.equal(ended.cancelRequestedAt, undefined, 'terminated, not asked');
});

test('pause and resume a run from the console, after confirming', async () => {
  const { run } = await waitingOnboarding('pause@example.com');
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  await runStatus().filter({ hasText: 'running' }).waitFor();
  assert.ok(await page.getByRole('button', { name: 'Resume…' }).isDisabled(), 'a run not paused cannot be resumed');

  // Dismissing the confirmation changes nothing.
  await page.getByRole('button', { name: 'Pause…' }).click();
  await page.getByRole('dialog', { name: 'Pause this run?' }).getByRole('button', { name: 'Cancel', exact: true }).click();
  assert.equal((await daemon.api('GET', `/workflows/onboarding/runs/${run.id}`)).status, 'running');

  // The run waits for an event, held by no host: it pauses at once.
  await page.getByRole('button', { name: 'Pause…' }).click();
  await page.getByRole('dialog', { name: 'Pause this run?' }).getByRole('button', { name: 'Pause run' }).click();
  await runStatus().filter({ hasText: 'paused' }).waitFor();
  const paused = await daemon.api('GET', `/workflows/onboarding/runs/${run.id}`);
  assert.equal(paused.status, 'paused');
  assert.ok(paused.pausedAt);
  assert.ok(await page.getByRole('button', { name: 'Pause…' }).isDisabled());

  await page.getByRole('button', { name: 'Resume…' }).click();
  await page.getByRole('dialog', { name: 'Resume this run?' }).getByRole('button', { name: 'Resume run' }).click();
  await runStatus().filter({ hasText: 'running' }).waitFor();
  const resumed = await daemon.api('GET', `/workflows/onboarding/runs/${run.id}`);
  assert.equal(resumed.status, 'running');
  assert.equal(resumed.pausedAt, undefined);
});

test('pause and resume a workflow from the console, after confirming', async () => {
  await signIn();
  await page.goto(`${daemon.url}/ui/#/workflows`);
  await page.getByRole('button', { name: 'Pause timeouts…' }).click();
  await page.getByRole('dialog', { name: 'Pause workflow timeouts?' }).getByRole('button', { name: 'Pause workflow' }).click();
  await page.getByRole('button', { name: 'Resume timeouts…' }).waitFor();
  const run = await daemon.api('POST', '/workflows/timeouts/runs', { input: { hangAttempts: 0 } });
  assert.equal(run.status, 'paused', 'a run of a paused workflow starts paused');
  await page.getByRole('button', { name: 'Resume timeouts…' }).click();
  await page.getByRole('dialog', { name: 'Resume workflow timeouts?' }).getByRole('button', { name: 'Resume workflow' }).click();
  await page.getByRole('button', { name: 'Pause timeouts…' }).waitFor();
  assert.notEqual((await daemon.api('GET', `/workflows/timeouts/runs/${run.id}`)).status, 'paused');
});

test('filter the runs list by workflow, status and input', async () => {
  const a = await daemon.api('POST', '/workflows/onboarding/runs', { input: { email: 'filter-me@example.com', verifyTimeoutMs: 600000 } });
  await daemon.api('POST', '/workflows/onboarding/runs', { input: { email: 'someone-else@example.com', verifyTimeoutMs: 600000 } });
  await daemon.api('POST', '/workflows/steps/runs', { input: { n: 1 } });
  await signIn();
  await page.locator('table.runs tbody tr a').first().waitFor();

  await page.getByText('Filters', { exact: true }).click();
  await page.getByLabel('Workflow', { exact: true }).selectOption('onboarding');
  await page.getByLabel('Input fields').fill('email=filter-me@example.com');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/workflow=onboarding/);
  await page.waitForFunction(() => document.querySelectorAll('table.runs tbody tr a').length === 1);
  assert.equal(await page.locator('table.runs tbody tr a').textContent(), a.id);

  // The status counts are links to the list filtered by that status.
  await page.goto(`${daemon.url}/ui/#/runs?workflow=steps`);
  await page.getByRole('heading', { name: 'Runs of steps' }).waitFor();
  await page.getByRole('list', { name: 'Runs by status of steps' }).getByRole('link', { name: /completed/ }).click();
  await page.waitForURL(/status=completed/);
  await page.locator('ul.counts a[aria-current="true"]', { hasText: 'completed' }).waitFor();
  const workflows = await page.locator('table.runs tbody td.c1').allTextContents();
  assert.ok(workflows.length > 0 && workflows.every((w) => w.startsWith('steps')), `rows: ${workflows}`);
  const statuses = await page.locator('table.runs tbody td.c2').allTextContents();
  assert.ok(statuses.every((s) => s === 'completed'), `statuses: ${statuses}`);
  if (shots) {
    await page.goto(`${daemon.url}/ui/#/runs`);
    await page.locator('table.runs tbody tr a').first().waitFor();
    await page.screenshot({ path: join(shots, 'console-runs.png') });
  }
});

test('the runs list refreshes itself: a run started elsewhere appears and moves on', async () => {
  await signIn();
  await page.locator('table.runs tbody tr a').first().waitFor();
  const run = await daemon.api('POST', '/workflows/steps/runs', { input: { n: 2, sleepMs: 200 }, idempotencyKey: 'live-refresh' });
  const row = page.locator('table.runs tbody tr', { has: page.getByRole('link', { name: run.id }) });
  await row.waitFor();
  await row.locator('.badge', { hasText: 'completed' }).waitFor();
});

test('run data that looks like markup shows as text and runs nothing', async () => {
  const evil = '<img src=x onerror=window.__pwned=1>';
  const { run, userId } = await waitingOnboarding(`${evil}@example.com`);
  // The event payload, and so the run's output ("verified via ..."), carries it too.
  await daemon.api('POST', `/workflows/onboarding/runs/${run.id}/signals/verify`, { userId, via: evil });
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/onboarding/${run.id}`);
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  assert.ok((await page.getByRole('figure', { name: 'Output' }).textContent()).includes(`verified via ${evil}`));
  assert.ok((await page.getByRole('figure', { name: 'Input' }).textContent()).includes(evil));
  await page.goto(`${daemon.url}/ui/#/runs?workflow=onboarding`);
  await page.locator('table.runs tbody tr a').first().waitFor();
  assert.equal(await page.locator('main img').count(), 0, 'an <img> element was made from run data');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
});

test('the admin token manages tenants and switches to one', async () => {
  await signIn(daemon.admin);
  await page.getByRole('heading', { name: 'Tenants' }).waitFor();
  await page.getByRole('link', { name: 'default' }).click();
  await page.getByRole('heading', { name: 'Tenant default' }).waitFor();
  await page.getByLabel('Allowed hosts, one per line').fill('api.example.com');
  await page.getByRole('button', { name: 'Save limits…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Save limits' }).click();
  await page.getByRole('status').filter({ hasText: 'Limits of default saved' }).waitFor();
  const res = await fetch(`${daemon.url}/v1/tenant`, { headers: { Authorization: `Bearer ${daemon.token}` } });
  assert.deepEqual((await res.json()).limits.allowedHosts, ['api.example.com']);

  await page.getByLabel('Act as tenant').selectOption('default');
  await page.getByRole('dialog').getByRole('button', { name: 'Create token and switch' }).click();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();
  await page.locator('table.runs tbody tr a').first().waitFor();

  // Signing out revokes the token the switcher made.
  const adminGet = async (path) => (await fetch(`${daemon.url}/v1${path}`, { headers: { Authorization: `Bearer ${daemon.admin}` } })).json();
  const consoleTokens = async () => (await adminGet('/tenants/default/tokens')).tokens.filter((t) => t.name === 'console');
  const made = await consoleTokens();
  assert.equal(made.length, 1);
  assert.equal(made[0].revokedAt, undefined);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  assert.ok((await consoleTokens())[0].revokedAt, 'the console token is still live after sign-out');
});

test('a tenant sees its limits and keeps its secrets write-only', async () => {
  await signIn();
  await page.getByRole('link', { name: 'Tenant', exact: true }).click();
  await page.getByRole('heading', { name: 'Tenant default' }).waitFor();
  await page.getByRole('row', { name: /Max steps per run/ }).waitFor();
  await page.getByLabel('Secret name').fill('smtp-password');
  await page.getByLabel('Value', { exact: true }).fill('hunter2-not-shown');
  await page.getByRole('button', { name: 'Save secret' }).click();
  await page.getByRole('cell', { name: 'smtp-password', exact: true }).waitFor();
  assert.ok(!(await page.locator('main').textContent()).includes('hunter2-not-shown'));
  const { secrets } = await daemon.api('GET', '/secrets');
  assert.deepEqual(secrets.map((x) => x.name), ['smtp-password']);
});

test('revoking the token the console signed in with signs it out', async () => {
  const tok = await daemon.api('POST', '/tokens', { name: 'short-lived' });
  await signIn(tok.secret);
  await page.getByRole('link', { name: 'Tenant', exact: true }).click();
  await page.getByRole('button', { name: `Revoke token ${tok.id}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'the revoked token is still kept');
  // The page's next read with the revoked token was a 401, as it should be.
  problems = problems.filter((p) => !p.includes('status of 401'));
});

test('deploy a module by upload', async () => {
  await signIn();
  await page.getByRole('link', { name: 'Workflows' }).click();
  await page.getByRole('heading', { name: 'Workflows and modules' }).waitFor();
  // The AssemblyScript build of the examples declares the same workflow versions as the Go
  // build the daemon deployed: it goes in only with replace.
  await page.getByLabel('WebAssembly module').setInputFiles(join(root, 'testdata/examples_as.wasm'));
  await page.getByLabel('Replace versions deployed with other code').check();
  await page.getByRole('button', { name: 'Upload and deploy' }).click();
  await page.getByRole('dialog', { name: 'Deploy this module?' }).getByRole('button', { name: 'Deploy' }).click();
  await page.getByRole('status').filter({ hasText: /^Deployed / }).waitFor();
  await page.waitForFunction(() => document.querySelectorAll('code.digest').length >= 2);
});

test('usable on a phone: nothing wider than the screen, every control reachable', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn();
  await page.locator('table.runs tbody tr a').first().waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the runs page is ${overflow}px wider than the screen`);
  await page.locator('table.runs tbody tr a').first().click();
  await page.getByRole('heading', { name: 'Timeline' }).waitFor();
  const overflow2 = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow2 <= 0, `the run page is ${overflow2}px wider than the screen`);
  // Keyboard: on a fresh load the first Tab reaches the skip link.
  await page.reload();
  await page.getByRole('heading', { name: 'Timeline' }).waitFor();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to content');
});

// Issue 18's additions: version and idempotency key filters, counts that follow the filters,
// continue-as-new links, the lease holder and a journal read a page at a time.

test('filter by version and idempotency key; the counts follow the filters', async () => {
  const keyed = await daemon.api('POST', '/workflows/steps/runs', { input: { n: 1 }, idempotencyKey: 'ui-filter-key' });
  await daemon.api('POST', '/workflows/steps/runs', { input: { n: 1 }, idempotencyKey: 'ui-other-key' });
  await daemon.api('GET', `/workflows/steps/runs/${keyed.id}?wait=30`);
  await signIn();
  await page.locator('table.runs tbody tr a').first().waitFor();
  const counts = page.getByRole('list', { name: 'Runs by status' });
  const count = async (label) => (await counts.getByRole('link', { name: new RegExp(`^\\S+ ${label}$`) }).locator('.n').textContent());

  await page.getByText('Filters', { exact: true }).click();
  await page.getByLabel('Idempotency key').fill('ui-filter-key');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/idempotencyKey=ui-filter-key/);
  await page.waitForFunction(() => document.querySelectorAll('table.runs tbody tr a').length === 1);
  assert.equal(await page.locator('table.runs tbody tr a').textContent(), keyed.id);
  // The counts are of the filtered runs: one, completed; not every run of the tenant.
  await page.waitForFunction(() => document.querySelector('ul.counts a .n')?.textContent === '1');
  assert.equal(await count('all'), '1');
  assert.equal(await count('completed'), '1');
  assert.equal(await count('continued'), '0');
  // A count's link keeps the filters and adds the status.
  await counts.getByRole('link', { name: /completed/ }).click();
  await page.waitForURL(/status=completed/);
  assert.match(page.url(), /idempotencyKey=ui-filter-key/);
  await page.locator('ul.counts a[aria-current="true"]', { hasText: 'completed' }).waitFor();

  // A version no run has: nothing listed, nothing counted; the version the runs have: all of them.
  await page.goto(`${daemon.url}/ui/#/runs?version=no-such-version`);
  await page.getByText('No runs match.').waitFor();
  await page.waitForFunction(() => document.querySelector('ul.counts a .n')?.textContent === '0');
  assert.equal(await page.getByLabel('Version', { exact: true }).inputValue(), 'no-such-version');
  const all = await daemon.api('GET', '/runs/counts?version=1');
  await page.goto(`${daemon.url}/ui/#/runs?version=1`);
  await page.locator('table.runs tbody tr a').first().waitFor();
  await page.waitForFunction((n) => document.querySelector('ul.counts a .n')?.textContent === String(n), all.total);
  const versions = await page.locator('table.runs tbody td.c1 .muted').allTextContents();
  assert.ok(versions.length > 0 && versions.every((v) => v.trim() === 'v1'), `versions: ${versions}`);
});

test('a child run links to its parent, and the parent\'s child step to the child', async () => {
  const parent = await daemon.api('POST', '/workflows/parent/runs', { input: { n: 5 } });
  const done = await daemon.api('GET', `/workflows/parent/runs/${parent.id}?wait=10`);
  assert.equal(done.status, 'completed');
  const { runs } = await daemon.api('GET', `/runs?parent=${parent.id}`);
  assert.equal(runs.length, 1);
  const child = runs[0];
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/parent/${parent.id}`);
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  await page.locator('details.step summary', { hasText: 'square' }).click();
  const link = page.locator('details.step[open] dl.facts div', { hasText: 'Child run' }).getByRole('link');
  assert.equal(await link.textContent(), child.id);
  await link.click();
  await page.waitForURL(new RegExp(`#/runs/child/${child.id}$`));
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  const trigger = page.locator('dl.facts').first().locator('div', { hasText: 'Triggered by' });
  assert.match(await trigger.textContent(), new RegExp(`a child step of ${parent.id} at step square`));
  assert.equal(await trigger.getByRole('link').textContent(), parent.id);
  const fact = page.locator('dl.facts').first().locator('div', { hasText: 'Parent' });
  assert.match(await fact.textContent(), /at step square/);
  await fact.getByRole('link').click();
  await page.waitForURL(new RegExp(`#/runs/parent/${parent.id}$`));
});

test('a parallel step says how many branches it forked and how they join', async () => {
  const run = await daemon.api('POST', '/workflows/parallel/runs', { input: { n: 3, join: 'allSettled' } });
  const done = await daemon.api('GET', `/workflows/parallel/runs/${run.id}?wait=10`);
  assert.equal(done.status, 'completed');
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/parallel/${run.id}`);
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  const step = page.locator('details.step', { hasText: 'fan' });
  assert.match(await step.locator('summary').textContent(), /3 branches, join allSettled/);
  await step.locator('summary').click();
  const captions = page.locator('details.step[open] figcaption');
  await captions.filter({ hasText: /^Request$/ }).waitFor();
  assert.equal(await captions.filter({ hasText: /^Match$/ }).count(), 0);
});

test('a run that continued as new links to the runs before and after it', async () => {
  const first = await daemon.api('POST', '/workflows/ticker/runs', { input: { turns: 3, ticks: 2 } });
  // Follow the chain through the API to its last run.
  const chain = [first.id];
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const r = await daemon.api('GET', `/workflows/ticker/runs/${chain[chain.length - 1]}?wait=10`);
    if (r.continuedAs) { chain.push(r.continuedAs); continue; }
    if (r.status === 'completed') break;
    if (Date.now() > deadline) throw new Error(`the ticker chain never ended: ${JSON.stringify(r)}`);
  }
  assert.equal(chain.length, 3);
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/ticker/${chain[1]}`);
  await runStatus().filter({ hasText: 'continued' }).waitFor();
  const facts = page.locator('dl.facts').first();
  assert.equal(await facts.locator('div', { hasText: 'Continues' }).getByRole('link').textContent(), chain[0]);
  await facts.locator('div', { hasText: 'Continued as' }).getByRole('link').click();
  await page.waitForURL(new RegExp(`#/runs/ticker/${chain[2]}$`));
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  assert.equal(await page.locator('dl.facts').first().locator('div', { hasText: 'Continues' }).getByRole('link').textContent(), chain[1]);
  assert.equal(await page.locator('dl.facts').first().locator('div', { hasText: 'Continued as' }).count(), 0);

  // continued is a status of the list's filter and counts.
  await page.goto(`${daemon.url}/ui/#/runs?workflow=ticker`);
  await page.getByRole('list', { name: 'Runs by status of ticker' }).getByRole('link', { name: /continued/ }).click();
  await page.waitForURL(/status=continued/);
  await page.waitForFunction(() => document.querySelectorAll('table.runs tbody tr a').length === 2);
  assert.equal(await page.locator('ul.counts a[aria-current="true"] .n').textContent(), '2');
  assert.equal(await page.getByLabel('Status', { exact: true }).inputValue(), 'continued');
});

test('a run a host is executing names the host that holds it', async () => {
  // The step's first attempt hangs until its 8 s timeout: the run is held all that time.
  const run = await daemon.api('POST', '/workflows/timeouts/runs', { input: { hangAttempts: 1, timeoutMs: 8000, attempts: 2 } });
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/timeouts/${run.id}`);
  const held = page.locator('dl.facts').first().locator('div', { hasText: 'Held by' });
  await held.waitFor();
  const api = await daemon.api('GET', `/workflows/timeouts/runs/${run.id}`);
  assert.ok(api.lease && api.lease.owner, `the API shows no lease: ${JSON.stringify(api)}`);
  assert.match(await held.textContent(), new RegExp(`${api.lease.owner} until`));
  // Once the run has ended, no host holds it.
  await runStatus().filter({ hasText: 'completed' }).waitFor({ timeout: 30000 });
  await held.waitFor({ state: 'detached' });
});

test('a long journal is read a page at a time', async () => {
  const run = await daemon.api('POST', '/workflows/steps/runs', { input: { n: 1150 } });
  await daemon.api('GET', `/workflows/steps/runs/${run.id}?wait=60`);
  const reads = [];
  page.on('request', (r) => { const u = new URL(r.url()); if (u.pathname.endsWith('/steps')) reads.push(u.searchParams); });
  await signIn();
  await page.goto(`${daemon.url}/ui/#/runs/steps/${run.id}`);
  await runStatus().filter({ hasText: 'completed' }).waitFor();
  const entries = page.getByRole('list', { name: 'Journal entries in order' }).locator(':scope > li');
  await page.waitForFunction(() => document.querySelectorAll('ol.steps > li').length === 300);
  assert.ok(reads.length > 0 && reads.every((q) => Number(q.get('limit')) <= 1000), `reads: ${reads.map(String)}`);
  assert.equal(reads[0].get('limit'), '300');
  await page.getByText('300 entries shown; the journal goes on.').waitFor();

  await page.getByRole('button', { name: 'Show 1000 more entries' }).click();
  await page.waitForFunction(() => document.querySelectorAll('ol.steps > li').length === 1150);
  assert.equal(await page.getByRole('button', { name: /more entries/ }).count(), 0);
  assert.equal(await entries.last().locator('.key').textContent(), 's#1149');
  // The second read started where the first ended: no entry was read twice.
  const later = reads.filter((q) => q.get('cursor'));
  assert.ok(later.length > 0 && later.every((q) => Number(q.get('cursor')) >= 300), `reads: ${reads.map(String)}`);
});
