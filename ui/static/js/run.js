// A run: its header, actions, input/output/error, the timeline of its journal, its dry replay
// and query tools, what its guest logged, its outbound HTTP audit trail and its lifecycle log;
// refreshed every couple of seconds until the run has ended.
import { h, replace, badge, when, duration, jsonBlock, toast, confirmDialog, field } from './dom.js';
import { call, enc, ApiError } from './api.js';
import { runHref } from './nav.js';

const REFRESH_MS = 2000;
// A run may have up to 100,000 journal entries (--max-steps-per-run): the timeline reads and
// draws this many at first, and MORE more on request, a page of GET .../steps at a time, so a
// long run's page stays quick to read, to draw and to use.
const SHOWN = 300;
const MORE = 1000;
const PAGE_MAX = 1000; // the API's largest journal page
const ENDED = new Set(['completed', 'failed', 'cancelled', 'continued', 'nondeterministic']);
// A journal entry in one of these statuses never changes again: a refresh reads the journal
// from the first entry that may still change.
const FINAL = new Set(['completed', 'failed']);

export async function runView(el, workflow, id) {
  const base = `/workflows/${enc(workflow)}/runs/${enc(id)}`;
  let stopped = false;
  let timer = null;
  let every = REFRESH_MS;
  let last = '';        // the data last drawn, to draw an ended run again only when it changed
  let lastStatus = '';  // announced to screen readers when it changes
  const open = new Set(); // the steps whose details are open, kept across refreshes
  const shown = { n: SHOWN }; // how many journal entries the timeline reads and draws, raised by "Show more"
  let steps = [];         // the journal entries read so far, in order
  let more = false;       // whether the journal goes on past them
  const log = [];         // the lifecycle log entries read so far: append-only, so a refresh reads only newer ones
  const lines = [];       // the guest log's lines read so far: append-only too

  // readLog appends the log entries after the last one read.
  async function readLog() {
    for (;;) {
      const query = { limit: String(PAGE_MAX) };
      if (log.length) query.cursor = String(log[log.length - 1].seq);
      const page = await call('GET', `${base}/log`, { query });
      log.push(...page.entries);
      if (!page.nextCursor) return log;
    }
  }

  // readGuestLog appends the guest's lines after the last one read.
  async function readGuestLog() {
    for (;;) {
      const query = { limit: String(PAGE_MAX) };
      if (lines.length) query.cursor = String(lines[lines.length - 1].seq);
      const page = await call('GET', `${base}/logs`, { query });
      lines.push(...page.lines);
      if (!page.nextCursor) return lines;
    }
  }

  // readSteps brings steps up to date: it reads again from the first entry that may still
  // change (a live run's last few) up to shown.n entries, a page at a time, so a refresh of a
  // run with a long journal reads its tail, not the whole of it.
  async function readSteps() {
    let i = steps.findIndex((s) => !FINAL.has(s.status));
    if (i < 0) i = steps.length;
    if (i >= shown.n) {
      // Every entry shown is final: only whether the journal goes on past them may change.
      const kept = steps.slice(0, shown.n);
      const page = await call('GET', `${base}/steps`, { query: { limit: '1', cursor: String(kept[kept.length - 1].seq + 1) } });
      return { steps: kept, more: page.steps.length > 0 };
    }
    let cursor = i < steps.length ? String(steps[i].seq) : steps.length ? String(steps[steps.length - 1].seq + 1) : '';
    const want = shown.n - i;
    const got = [];
    let next = '';
    for (;;) {
      const query = { limit: String(Math.min(want - got.length, PAGE_MAX)) };
      if (cursor) query.cursor = cursor;
      const page = await call('GET', `${base}/steps`, { query });
      got.push(...page.steps);
      next = page.nextCursor || '';
      if (!next || got.length >= want) break;
      cursor = next;
    }
    return { steps: steps.slice(0, i).concat(got), more: !!next };
  }

  const headerEl = h('section', { 'aria-labelledby': 'run-title' });
  const ioEl = h('section', { class: 'io', 'aria-label': 'Input and result' });
  const timelineEl = h('section', { 'aria-labelledby': 'tl-title' });
  // Built once, not redrawn with the run: a chosen file, a query typed and their answers stay.
  const tools = toolsSection(base);
  const outboundEl = h('section', { 'aria-labelledby': 'ob-title' });
  const logEl = h('section', { 'aria-labelledby': 'log-title' });
  const guestEl = h('section', { 'aria-labelledby': 'guest-title' });
  const liveEl = h('p', { class: 'sr-only', role: 'status', 'aria-live': 'polite' });
  replace(el, h('p', {}, h('a', { href: `#/runs?workflow=${enc(workflow)}`, text: `← Runs of ${workflow}` })),
    headerEl, ioEl, timelineEl, tools.el, guestEl, outboundEl, logEl, liveEl);

  async function load() {
    clearTimeout(timer);
    let run, read, outbound, children = {};
    try {
      [run, read, outbound] = await Promise.all([call('GET', base), readSteps(), call('GET', `${base}/outbound`), readLog(), readGuestLog()]);
      // A run whose steps started children links each child step to its run: one listing of
      // the run's children (abi/ABI.md §4.16), by the step that started each.
      if (read.steps.some((s) => s.kind === 'child')) {
        const kids = await call('GET', '/runs', { query: { parent: id, limit: '500' } });
        for (const k of kids.runs) if (!children[k.parentKey] || !k.continuedFrom) children[k.parentKey] = k;
      }
    } catch (e) {
      if (stopped) return;
      if (e instanceof ApiError && e.status === 404) {
        replace(el, h('h1', { text: 'Run not found' }), h('p', { text: e.message }), h('p', {}, h('a', { href: '#/runs', text: 'Back to the runs' })));
        return;
      }
      throw e;
    }
    if (stopped) return;
    steps = read.steps;
    more = read.more;
    const ended = ENDED.has(run.status);
    const snapshot = JSON.stringify([run, steps, more, outbound, children, log.length, lines.length]);
    // A live run's bars grow with the clock, so it is drawn again each time; an ended one only
    // when something changed (it no longer does).
    if (snapshot !== last || !ended) {
      const focusedId = document.activeElement && document.activeElement.id;
      if (lastStatus && lastStatus !== run.status) liveEl.textContent = `Run is now ${run.status}`;
      lastStatus = run.status;
      if (snapshot !== last) {
        renderHeader(headerEl, run, steps, base, () => load().catch(() => {}));
        renderIO(ioEl, run);
        tools.update(run);
        renderOutbound(outboundEl, outbound.outbound);
        renderLog(logEl, log);
        renderGuestLog(guestEl, lines);
      }
      renderTimeline(timelineEl, run, steps, more, open, shown, () => { last = ''; load().catch(() => {}); }, children, log);
      last = snapshot;
      if (focusedId) { const f = document.getElementById(focusedId); if (f && f !== document.activeElement) f.focus(); }
    }
    // A refresh reads the journal from its first entry that may change, so its cost follows
    // the entries still live, not the journal's length; a run with many of them (a wide fan-out
    // of sleeps) is read less often, a millisecond per entry read, from 2 s to 30 s.
    every = Math.min(Math.max(REFRESH_MS, steps.filter((s) => !FINAL.has(s.status)).length), 30000);
    if (!ended && !stopped) timer = setTimeout(tick, every);
  }
  // tick refreshes a live run, but not while its tab is hidden.
  function tick() {
    if (stopped) return;
    if (document.hidden) { timer = setTimeout(tick, every); return; }
    load().catch(() => { if (!stopped) timer = setTimeout(tick, every); });
  }
  await load();
  return () => { stopped = true; clearTimeout(timer); };
}

function renderHeader(el, run, steps, base, reload) {
  const ended = ENDED.has(run.status);
  const start = run.startedAt ? new Date(run.startedAt) : null;
  const end = run.completedAt ? new Date(run.completedAt) : null;
  const dl = h('dl', { class: 'facts' },
    fact('Status', badge(run.status)),
    fact('Workflow', h('a', { href: `#/runs?workflow=${enc(run.workflow)}`, text: run.workflow })),
    fact('Version', run.version),
    fact('Module digest', h('code', { class: 'mono digest', title: run.moduleDigest, text: run.moduleDigest })),
    fact('Created', when(run.createdAt)),
    fact('Started', when(run.startedAt)),
    fact('Ended', when(run.completedAt)),
    fact('Duration', start && end ? duration(end - start) : start ? `${duration(Date.now() - start)} so far` : '—'),
    fact('Activations', String(run.activations)),
    run.lease ? fact('Held by', h('code', { class: 'mono', text: run.lease.owner }),
      h('span', { class: 'muted' }, ' until ', when(run.lease.expiresAt))) : null,
    run.triggeredBy ? fact('Triggered by', ...triggerFacts(run)) : null,
    run.attempt > 1 ? fact('Attempt', String(run.attempt)) : null,
    run.continuedFrom ? fact(run.attempt > 1 ? 'Retry of' : 'Continues', runLink(run.workflow, run.continuedFrom)) : null,
    run.continuedAs ? fact(run.status === 'failed' ? 'Retried as' : 'Continued as', runLink(run.workflow, run.continuedAs)) : null,
    run.parentRunId ? fact('Parent', run.parentWorkflow ? runLink(run.parentWorkflow, run.parentRunId) : h('code', { class: 'mono', text: run.parentRunId }),
      h('span', { class: 'muted' }, ' at step '), h('code', { text: run.parentKey }),
      h('span', { class: 'muted', text: run.parentClose === 'abandon' ? ' (runs on if it is cancelled)' : ' (cancelled with it)' })) : null,
    run.idempotencyKey ? fact('Idempotency key', h('code', { text: run.idempotencyKey })) : null,
    run.pausedAt ? fact(run.status === 'paused' ? 'Paused' : 'Pause asked', run.status === 'paused' ? when(run.pausedAt)
      : `${when(run.pausedAt)}; it holds at its next durable call`) : null,
    run.cancelRequestedAt ? fact('Cancel requested', `${when(run.cancelRequestedAt)}; terminated at ${when(run.cancelGraceUntil)} if it has not ended`) : null,
    fact('Retention', `${run.retentionDays} days`),
    fact('Updated', when(run.updatedAt)));

  // Ids let a redraw give the focus back to the button that had it.
  const signalBtn = h('button', { type: 'button', id: 'run-signal', class: 'secondary', text: 'Send a signal…', disabled: ended });
  const cancelBtn = h('button', { type: 'button', id: 'run-cancel', class: 'danger', text: 'Cancel run…', disabled: ended || !!run.cancelRequestedAt });
  const terminateBtn = h('button', { type: 'button', id: 'run-terminate', class: 'danger', text: 'Terminate…', disabled: ended });
  const paused = run.status === 'paused' || !!run.pausedAt;
  const pauseBtn = h('button', { type: 'button', id: 'run-pause', class: 'secondary', text: 'Pause…', disabled: ended || paused });
  const resumeBtn = h('button', { type: 'button', id: 'run-resume', class: 'secondary', text: 'Resume…', disabled: ended || !paused });
  pauseBtn.addEventListener('click', async () => {
    const v = await confirmDialog({
      title: 'Pause this run?',
      message: `Run ${run.id} finishes the step it is in and holds (status paused) until it is resumed: no host runs it, its timers wait and the events sent to it are kept.`,
      confirm: 'Pause run',
    });
    if (!v) return;
    try {
      const r = await call('POST', `${base}/pause`);
      toast(r.status === 'paused' ? `Run ${r.id} is paused` : `Pause asked: run ${r.id} holds at its next durable call`);
      reload();
    } catch (e) { toast(e.message, 'error'); }
  });
  resumeBtn.addEventListener('click', async () => {
    const version = h('input', { name: 'version', autocomplete: 'off', value: '', placeholder: run.version });
    const v = await confirmDialog({
      title: 'Resume this run?',
      message: `Run ${run.id} goes on from where it held. Name another version of ${run.workflow} to resume on it: the run moves only if a replay of its journal against that version passes.`,
      confirm: 'Resume run', body: [field('Version (optional)', version)],
    });
    if (!v) return;
    try {
      const body = v.version.trim() ? JSON.stringify({ version: v.version.trim() }) : '{}';
      const r = await call('POST', `${base}/resume`, { body });
      toast(`Run ${r.id} is ${r.status}`);
      reload();
    } catch (e) { toast(e.message, 'error'); }
  });
  signalBtn.addEventListener('click', async () => {
    // A run that waits says for what: the form starts from that event and its match.
    const waiting = steps.find((st) => st.kind === 'wait' && st.status === 'waiting');
    const event = h('input', { name: 'event', required: true, autocomplete: 'off', value: waiting ? waiting.event : '' });
    const payload = h('textarea', { name: 'payload', rows: '5', spellcheck: 'false', class: 'mono' });
    payload.value = waiting && waiting.match !== undefined ? JSON.stringify(waiting.match, null, 2) : '{}';
    const v = await confirmDialog({
      title: 'Send a signal', message: `Send an event to run ${run.id}. A wait of the run for this event takes it, or it is kept until one does.`,
      confirm: 'Send signal', body: [field('Event', event), field('Payload (JSON)', payload)],
    });
    if (!v) return;
    try {
      const res = await call('POST', `${base}/signals/${enc(v.event)}`, { body: v.payload.trim() || '{}' });
      toast(`Signal ${res.event}: ${res.state}`);
      reload();
    } catch (e) { toast(e.message, 'error'); }
  });
  cancelBtn.addEventListener('click', async () => {
    const grace = h('input', { name: 'grace', type: 'number', min: '1', max: '86400', step: '1', required: true, value: '60' });
    const v = await confirmDialog({
      title: 'Cancel this run?',
      message: `The workflow of run ${run.id} is told at its next durable call and may compensate (undo what it did) for the grace period; then it is terminated. A module that does not handle a cancel is terminated at once. This cannot be undone.`,
      confirm: 'Cancel run', danger: true, body: [field('Grace period (seconds)', grace)],
    });
    if (!v) return;
    try {
      const ms = Math.round(Number(v.grace) * 1000);
      const r = await call('POST', `${base}/cancel?graceMs=${ms}`);
      toast(r.status === 'cancelled' ? `Run ${r.id} is cancelled` : `Cancel requested: the workflow is told and may compensate until ${when(r.cancelGraceUntil)}`);
      reload();
    } catch (e) { toast(e.message, 'error'); }
  });
  terminateBtn.addEventListener('click', async () => {
    const v = await confirmDialog({
      title: 'Terminate this run?', message: `Run ${run.id} of ${run.workflow} stops now, wherever it is, and ends as cancelled: no code of it runs again, and it compensates nothing. This cannot be undone.`,
      confirm: 'Terminate run', danger: true,
    });
    if (!v) return;
    try {
      const r = await call('POST', `${base}/terminate`);
      toast(`Run ${r.id} is ${r.status}`);
      reload();
    } catch (e) { toast(e.message, 'error'); }
  });

  replace(el,
    h('div', { class: 'title-row' },
      h('h1', { id: 'run-title' }, h('span', { class: 'muted', text: `${run.workflow} · ` }), h('span', { class: 'mono', text: run.id })),
      h('div', { class: 'actions', role: 'group', 'aria-label': 'Run actions' }, signalBtn, pauseBtn, resumeBtn, cancelBtn, terminateBtn)),
    dl);
}

// triggerFacts says what started run (its triggeredBy), as text and links, never markup. A run
// of another workflow links only when the run view names that workflow (a parent does; a hook's
// ended run does not, and shows as its id).
function triggerFacts(run) {
  const t = run.triggeredBy;
  const muted = (text) => h('span', { class: 'muted', text });
  const code = (text) => h('code', { class: 'mono', text });
  switch (t.kind) {
    case 'api': return ['a client',
      ...(t.tokenId ? [muted(' with token '), code(t.tokenId)] : []),
      ...(t.host ? [muted(' (created on host '), code(t.host), muted(')')] : [])];
    case 'schedule': return ['schedule ', code(t.scheduleId), muted(' for its fire time '), when(t.fireAt)];
    case 'event': return ['event ', code(t.event), ...(t.eventId ? [muted(' id '), code(t.eventId)] : [])];
    case 'signalWithStart': return ['signal-with-start of ', code(t.event)];
    case 'parent':
    case 'branch': return [t.kind === 'branch' ? 'a branch of ' : 'a child step of ',
      run.parentWorkflow ? runLink(run.parentWorkflow, t.runId) : code(t.runId), muted(' at step '), code(t.key)];
    case 'hook': return ['hook ', code(t.hookId), muted(' when run '), code(t.runId), muted(' ended')];
    case 'retry': return ['its retry policy, after ', runLink(run.workflow, t.runId)];
    case 'continueAsNew': return ['its predecessor continuing as new: ', runLink(run.workflow, t.runId)];
    case 'restart': return ['a restart of ', runLink(run.workflow, t.runId)];
    default: return [String(t.kind)];
  }
}

// runLink links to a run of the same workflow (continue-as-new and retries keep the workflow).
function runLink(workflow, id) {
  return h('a', { href: runHref(workflow, id), class: 'mono', text: id });
}

function fact(term, ...value) {
  return h('div', {}, h('dt', { text: term }), h('dd', {}, value));
}

function renderIO(el, run) {
  replace(el,
    jsonBlock('Input', run.input ?? null),
    run.output !== undefined ? jsonBlock('Output', run.output) : null,
    run.error ? jsonBlock('Error', run.error) : null);
}

// toolsSection is the run's dry tools, neither of which changes the run: a replay of its journal
// against a module file (POST .../replay, the upgrade gate's dry replay), and, for a live run
// whose module answers queries, a query (POST .../query/{name}). update shows the query form
// only where it can answer.
function toolsSection(base) {
  const file = h('input', { type: 'file', name: 'module', accept: '.wasm,application/wasm', required: true });
  const replayOut = h('div', { class: 'tool-result', role: 'status', 'aria-live': 'polite' });
  const replayBtn = h('button', { type: 'submit', class: 'secondary', text: 'Replay against this module' });
  const replayForm = h('form', { class: 'inline-form', 'aria-label': 'Replay this run against a module' },
    field('Module (.wasm)', file, 'Nothing is deployed and the run does not change.'), replayBtn);
  replayForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!file.files.length) return;
    const body = new FormData();
    body.append('module', file.files[0]);
    replayBtn.disabled = true;
    replace(replayOut, h('p', { class: 'muted', text: `Replaying against ${file.files[0].name}…` }));
    try {
      replace(replayOut, replayReport(await call('POST', `${base}/replay`, { body }), file.files[0].name));
    } catch (e) {
      replace(replayOut, h('p', { class: 'error', text: `Replay refused: ${e.message}` }));
    } finally { replayBtn.disabled = false; }
  });

  const name = h('input', { name: 'query', required: true, autocomplete: 'off', maxlength: '200', value: 'status' });
  const arg = h('textarea', { name: 'arg', rows: '2', spellcheck: 'false', class: 'mono' });
  arg.value = 'null';
  const queryOut = h('div', { class: 'tool-result', role: 'status', 'aria-live': 'polite' });
  const queryBtn = h('button', { type: 'submit', class: 'secondary', text: 'Send query' });
  const queryForm = h('form', { class: 'inline-form', 'aria-label': 'Query this run' },
    field('Query name', name), field('Argument (JSON)', arg), queryBtn);
  queryForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const text = arg.value.trim() || 'null';
    try { JSON.parse(text); } catch (e) {
      replace(queryOut, h('p', { class: 'error', text: `The argument is not JSON: ${e.message}` }));
      return;
    }
    queryBtn.disabled = true;
    try {
      const ans = await call('POST', `${base}/query/${enc(name.value)}`, { body: text });
      replace(queryOut, jsonBlock(`Answer to ${name.value}`, ans.result ?? null),
        h('p', { class: 'muted', text: `Answered at journal entry ${ans.at.seq} (${ans.at.at.kind} “${ans.at.at.key}”${ans.at.new ? ', not yet in the journal' : ''}).` }));
    } catch (e) {
      replace(queryOut, h('p', { class: 'error', text: `Query failed (${e.code}): ${e.message}` }));
    } finally { queryBtn.disabled = false; }
  });
  const queryNote = h('p', { class: 'muted' });
  const queryPart = h('div', {}, h('h3', { id: 'query-title', text: 'Query' }), queryNote, queryForm, queryOut);

  const el = h('section', { class: 'tools', 'aria-labelledby': 'tools-title' },
    h('h2', { id: 'tools-title', text: 'Replay and query' }),
    h('div', {}, h('h3', { id: 'replay-title', text: 'Dry replay' }),
      h('p', { class: 'muted', text: 'Replay this run’s journal against another build of its module: compatible, or where it diverges.' }),
      replayForm, replayOut),
    queryPart);
  function update(run) {
    const ended = ENDED.has(run.status);
    const answers = (run.features || []).includes('query');
    queryForm.hidden = ended || !answers;
    queryNote.textContent = ended ? 'The run has ended: it has no place to answer a query at.'
      : answers ? 'Ask the workflow a query it registered; it answers from where the run stands, and nothing changes.'
        : 'The run’s module does not declare the query feature.';
  }
  return { el, update };
}

// replayReport draws a dry replay's answer: the verdict, where it diverged or stopped, and the
// end the module would write.
function replayReport(rep, fileName) {
  const ref = (r) => r ? `${r.kind} “${r.key}”${r.event ? ` for event “${r.event}”` : ''}` : 'the workflow’s end';
  const d = rep.divergence;
  const head = rep.verdict === 'diverged'
    ? h('p', { class: 'verdict diverged' }, h('strong', { text: 'Diverged' }), ` at journal entry ${d.seq}: ${fileName} would not replay this run.`)
    : h('p', { class: 'verdict compatible' }, h('strong', { text: 'Compatible' }), `: ${fileName} replays this run’s journal.`);
  const facts = h('dl', { class: 'facts small' },
    fact('Replayed', `${rep.replayed} of ${rep.journal} journal entries`),
    fact('Module digest', h('code', { class: 'mono digest', title: rep.moduleDigest, text: rep.moduleDigest })),
    d ? fact('Expected', ref(d.expected)) : null,
    d ? fact('Reached', ref(d.reached)) : null,
    rep.stopped ? fact('Stops at', `entry ${rep.stopped.seq}: ${ref(rep.stopped.at)}${rep.stopped.new ? ', a step the journal does not have' : ', not ended yet'}`) : null,
    rep.ended ? fact('Ends', rep.error ? 'failed' : rep.continuedAsNew !== undefined ? 'continued as new' : 'completed') : null);
  return [head, facts,
    d ? h('p', { class: 'mono', text: d.message }) : null,
    rep.ended && rep.output !== undefined ? jsonBlock('Output it would produce', rep.output) : null,
    rep.ended && rep.error ? jsonBlock('Error it would end with', rep.error) : null,
    rep.logs && rep.logs.length ? h('div', { class: 'table-wrap' }, h('table', {},
      h('caption', { text: 'What the guest logged during the replay' }),
      h('thead', {}, h('tr', {}, ['Level', 'Message'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, rep.logs.map((l) => h('tr', {}, h('td', { text: l.level }), h('td', { class: 'mono', text: l.message })))))) : null];
}

// A step's bar on the timeline: from when it started to when it ended, or to now while it is in
// progress. The parts after now (a sleep's or a backoff's remaining time, a wait's timeout) are
// drawn to the end of the scale and named in the text, so a 24-hour timeout does not squash
// the rest of the run into a pixel.
function renderTimeline(el, run, steps, more, open, shown, redraw, children, log) {
  const now = Date.now();
  const t0 = new Date(run.startedAt || run.createdAt).getTime();
  let t1 = run.completedAt ? new Date(run.completedAt).getTime() : now;
  for (const s of steps) {
    const e = s.completedAt ? new Date(s.completedAt).getTime() : now;
    if (e > t1) t1 = e;
  }
  const span = Math.max(t1 - t0, 1);
  const pct = (t) => `${(Math.min(Math.max(t - t0, 0), span) / span * 100).toFixed(3)}%`;
  const width = (a, b) => `${Math.max((Math.min(b, t1) - Math.max(a, t0)) / span * 100, 0.4).toFixed(3)}%`;

  const axis = h('div', { class: 'axis', 'aria-hidden': 'true' },
    [0, 0.25, 0.5, 0.75, 1].map((f) => h('span', { class: `tick t${f * 100}`, text: `+${duration(span * f)}` })));

  const items = steps.map((s) => {
    const start = new Date(s.startedAt).getTime();
    const end = s.completedAt ? new Date(s.completedAt).getTime() : now;
    const wake = s.wakeAt ? new Date(s.wakeAt) : null;
    const attempts = attemptsOf(s, log, now);
    const track = h('span', { class: 'track', 'aria-hidden': 'true' });
    if (attempts) {
      // A bar per attempt, and a hatched one per backoff between them.
      for (const a of attempts) {
        const b = h('span', { class: a.backoff ? 'bar backoff' : `bar attempt k-run st-${a.status}`, dataset: a.backoff ? { backoff: String(a.n) } : { attempt: String(a.n) } });
        b.style.left = pct(a.start);
        b.style.width = width(a.start, a.end);
        track.appendChild(b);
      }
    } else {
      const bar = h('span', { class: `bar k-${s.kind} st-${s.status}` });
      bar.style.left = pct(start);
      bar.style.width = width(start, end);
      track.appendChild(bar);
    }
    if (!s.completedAt && wake && wake.getTime() > now) {
      // The remaining time: a sleep's, a backoff's or a wait's timeout, hatched to the end.
      const rest = h('span', { class: `bar pending-part k-${s.kind}` });
      rest.style.left = pct(now);
      rest.style.width = `calc(100% - ${pct(now)})`;
      track.appendChild(rest);
    }
    const id = `step-${s.seq}`;
    const det = h('details', { class: 'step', id: `${id}-d`, open: open.has(s.seq) || undefined },
      h('summary', { id },
        h('span', { class: 'what' },
          h('span', { class: `kind k-${s.kind}`, text: s.kind }), ' ',
          h('span', { class: 'key mono', text: s.key })),
        track,
        h('span', { class: 'about' }, badge(s.status), ' ', describe(s, now))),
      stepDetails(s, children[s.key], attempts));
    det.addEventListener('toggle', () => { if (det.open) open.add(s.seq); else open.delete(s.seq); });
    return h('li', {}, det);
  });
  replace(el,
    h('h2', { id: 'tl-title', text: 'Timeline' }),
    steps.length === 0
      ? h('p', { class: 'muted', text: run.status === 'pending' ? 'The run has not started yet.' : 'The journal is empty.' })
      : h('div', { class: 'timeline' }, axis, h('ol', { class: 'steps', 'aria-label': 'Journal entries in order' }, items)),
    more
      ? h('p', {}, h('span', { class: 'muted', text: `${steps.length} entries shown; the journal goes on. ` }),
        h('button', { type: 'button', id: 'show-more', class: 'secondary', text: `Show ${MORE} more entries`,
          on: { click: () => { shown.n = steps.length + MORE; redraw(); } } }))
      : null);
}

// describe says in words what the bar shows: how long, how many attempts, what it waits for
// and until when.
function describe(s, now) {
  const parts = [];
  if (s.durationMs !== undefined) parts.push(duration(s.durationMs));
  else parts.push(`${duration(now - new Date(s.startedAt).getTime())} so far`);
  const until = s.wakeAt ? new Date(s.wakeAt).toLocaleString() : '';
  if (s.kind === 'run') {
    if (s.attempt > 1 || s.status === 'retrying') parts.push(`${s.attempt} attempt${s.attempt === 1 ? '' : 's'}`);
    if (s.status === 'retrying' && until) parts.push(`backing off, next attempt at ${until}`);
  } else if (s.kind === 'sleep') {
    if (until) parts.push(s.status === 'sleeping' ? `until ${until}` : `was until ${until}`);
  } else if (s.kind === 'child') {
    if (s.status === 'waiting') parts.push('waiting for its child run to end');
  } else if (s.kind === 'parallel') {
    if (s.match && s.match.branches) parts.push(`${s.match.branches} branch${s.match.branches === 1 ? '' : 'es'}, join ${s.match.join}`);
    if (s.status === 'waiting') parts.push('waiting for its join');
  } else if (s.kind === 'wait') {
    let what = `for event “${s.event}”`;
    if (s.match && Object.keys(s.match).length) what += ` matching ${JSON.stringify(s.match)}`;
    parts.push(s.status === 'waiting' ? `waiting ${what}${until ? ` until ${until}` : ', no timeout'}` : what);
  }
  return h('span', { class: 'desc', text: parts.join(' · ') });
}

function stepDetails(s, child, attempts) {
  const kids = [];
  const facts = h('dl', { class: 'facts small' },
    child ? fact('Child run', runLink(child.workflow, child.id), h('span', { class: 'muted' }, ' ', child.status)) : null,
    fact('Sequence', String(s.seq)), fact('Started', when(s.startedAt)), fact('Ended', when(s.completedAt)),
    s.wakeAt ? fact(s.kind === 'run' ? 'Next attempt' : s.kind === 'wait' ? 'Times out' : 'Wakes', when(s.wakeAt)) : null,
    s.attempt ? fact('Attempts', String(s.attempt)) : null,
    s.event ? fact('Event', h('code', { text: s.event })) : null);
  kids.push(facts);
  // A parallel step's match is the request it forked (ABI.md §4.18), not an event filter.
  if (s.match !== undefined) kids.push(jsonBlock(s.kind === 'parallel' ? 'Request' : 'Match', s.match));
  if (s.output !== undefined) kids.push(jsonBlock(s.kind === 'wait' ? 'Event payload' : 'Output', s.output));
  if (attempts) kids.push(attemptsTable(s, attempts));
  if (s.error) kids.push(jsonBlock(s.status === 'retrying' ? 'Last error' : 'Error', s.error));
  if (s.outbound && s.outbound.length) kids.push(outboundTable(s.outbound, `HTTP requests of ${s.key}`));
  return h('div', { class: 'step-body' }, kids);
}

// attemptsOf derives a run step's attempts, and the backoffs between them, from the lifecycle
// log the page reads anyway: each failed attempt is a step_retrying entry (when it failed, its
// number, its error, when the next is due) or the step_failed that ended the step. An attempt
// starts at the step's start (the first) or when the backoff before it ended, or when a host
// claimed the run again if the run was handed back for the backoff; the last ends when the
// step did, or now while it runs. Null when the step had one attempt, or when the log does not
// hold every failed attempt (a restart's copied journal: its history is the source run's).
function attemptsOf(s, log, now) {
  if (s.kind !== 'run' || !(s.attempt > 1 || s.status === 'retrying')) return null;
  const retries = [];
  let failed = null;
  for (let i = 0; i < log.length; i++) {
    const e = log[i];
    if (!e.detail || e.detail.step !== s.key) continue;
    if (e.kind === 'step_retrying') retries.push(i);
    else if (e.kind === 'step_failed') failed = e;
  }
  if (retries.length !== (s.status === 'retrying' ? s.attempt : s.attempt - 1)) return null;
  const t = (iso) => new Date(iso).getTime();
  const out = [];
  let start = t(s.startedAt);
  retries.forEach((i, k) => {
    const r = log[i];
    const failedAt = Math.max(t(r.at), start);
    out.push({ n: k + 1, start, end: failedAt, status: 'failed', code: r.detail.code, message: r.detail.message });
    let next = r.detail.until ? Math.max(t(r.detail.until), failedAt) : failedAt;
    // Handed back for the backoff, the run's next attempt began when a host claimed it again.
    const handedBack = log.slice(i + 1).find((e) => e.kind === 'suspended' || e.kind === 'claimed');
    if (handedBack && handedBack.kind === 'suspended') {
      const claimed = log.slice(i + 1).find((e) => e.kind === 'claimed');
      if (claimed) next = Math.max(next, t(claimed.at));
    }
    out.push({ backoff: true, n: k + 1, start: failedAt, end: next });
    start = next;
  });
  const n = retries.length + 1;
  if (s.completedAt) {
    out.push({ n, start, end: Math.max(t(s.completedAt), start), status: s.status,
      code: failed && failed.detail.code, message: failed && failed.detail.message });
  } else if (now >= start && out.length && out[out.length - 1].end <= now) {
    out.push({ n, start, end: now, status: 'running' });
  }
  return out;
}

// attemptsTable says in words what the attempt bars show.
function attemptsTable(s, attempts) {
  const rows = attempts.filter((a) => !a.backoff);
  return h('div', { class: 'table-wrap' }, h('table', { class: 'attempts' },
    h('caption', { text: `Attempts of ${s.key}` }),
    h('thead', {}, h('tr', {}, ['Attempt', 'Started', 'Took', 'Outcome'].map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, rows.map((a) => h('tr', { 'data-attempt': String(a.n) },
      h('td', { class: 'num', text: String(a.n) }),
      h('td', {}, when(new Date(a.start).toISOString())),
      h('td', { class: 'num', text: a.status === 'running' ? `${duration(a.end - a.start)} so far` : duration(a.end - a.start) }),
      h('td', {}, a.status === 'failed' ? h('span', { class: 'error', text: `failed: ${a.code || 'error'}${a.message ? ` (${a.message})` : ''}` })
        : a.status === 'running' ? 'running' : s.status))))));
}

function renderOutbound(el, records) {
  replace(el, h('h2', { id: 'ob-title', text: 'Outbound HTTP audit' }),
    records.length ? outboundTable(records, 'Every outbound request and redirect hop the run made') : h('p', { class: 'muted', text: 'The run made no outbound HTTP requests.' }));
}

// renderGuestLog draws what the run's guest logged: its log calls and output lines, as the
// host stored them (redacted, at most 1,000 lines a run, the oldest kept).
function renderGuestLog(el, lines) {
  replace(el, h('h2', { id: 'guest-title', text: 'Guest logs' }),
    lines.length
      ? h('div', { class: 'table-wrap' }, h('table', { class: 'guest-log' },
          h('caption', { text: 'What the workflow logged, oldest first; lines of a pass replaying the journal are not kept twice' }),
          h('thead', {}, h('tr', {}, ['At', 'Level', 'Step', 'Message'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, lines.map((l) => h('tr', { 'data-level': l.level },
            h('td', {}, when(l.at)), h('td', { class: `level l-${l.level}`, text: l.stream ? `${l.level} (${l.stream})` : l.level }),
            h('td', { class: 'mono', text: l.step || '—' }),
            h('td', { class: 'mono message', text: l.message }))))))
      : h('p', { class: 'muted', text: 'The guest has logged nothing.' }));
}

// renderLog draws the run's lifecycle log: what the store did to the run, in order.
function renderLog(el, entries) {
  replace(el, h('h2', { id: 'log-title', text: 'Lifecycle log' }),
    entries.length
      ? h('div', { class: 'table-wrap' }, h('table', { class: 'lifecycle' },
          h('caption', { text: 'Every change of the run: created, claimed by a host, suspended and why, woken, attempts failed, events delivered, ended' }),
          h('thead', {}, h('tr', {}, ['At', 'Event', 'Host', 'Detail'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, entries.map((e) => h('tr', { 'data-kind': e.kind },
            h('td', {}, when(e.at)), h('td', { class: 'mono', text: e.kind }), h('td', { class: 'mono', text: e.host || '—' }),
            h('td', { class: 'mono', text: e.detail ? JSON.stringify(e.detail) : '—' }))))))
      : h('p', { class: 'muted', text: 'Nothing logged yet.' }));
}

function outboundTable(records, caption) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'outbound' },
    h('caption', { text: caption }),
    h('thead', {}, h('tr', {}, ['At', 'Step', 'Hop', 'Request', 'Status', 'Bytes out/in', 'Time'].map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, records.map((o) => h('tr', {},
      h('td', {}, when(o.at)), h('td', { class: 'mono', text: o.step || '—' }), h('td', { class: 'num', text: String(o.hop) }),
      h('td', { class: 'mono' }, `${o.method} ${o.scheme ? o.scheme + '://' : ''}${o.host}${o.port ? ':' + o.port : ''}${o.path}`),
      h('td', {}, o.error ? h('span', { class: 'error', text: o.error }) : String(o.status || '—')),
      h('td', { class: 'num', text: `${o.bytesOut} / ${o.bytesIn}` }),
      h('td', { class: 'num', text: duration(o.durationMs) }))))));
}

