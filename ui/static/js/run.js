// A run: its header, actions, input/output/error, the timeline of its journal, its outbound
// HTTP audit trail and its lifecycle log; refreshed every couple of seconds until the run has
// ended.
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
  const outboundEl = h('section', { 'aria-labelledby': 'ob-title' });
  const logEl = h('section', { 'aria-labelledby': 'log-title' });
  const liveEl = h('p', { class: 'sr-only', role: 'status', 'aria-live': 'polite' });
  replace(el, h('p', {}, h('a', { href: `#/runs?workflow=${enc(workflow)}`, text: `← Runs of ${workflow}` })),
    headerEl, ioEl, timelineEl, outboundEl, logEl, liveEl);

  async function load() {
    clearTimeout(timer);
    let run, read, outbound, children = {};
    try {
      [run, read, outbound] = await Promise.all([call('GET', base), readSteps(), call('GET', `${base}/outbound`), readLog()]);
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
    const snapshot = JSON.stringify([run, steps, more, outbound, children, log.length]);
    // A live run's bars grow with the clock, so it is drawn again each time; an ended one only
    // when something changed (it no longer does).
    if (snapshot !== last || !ended) {
      const focusedId = document.activeElement && document.activeElement.id;
      if (lastStatus && lastStatus !== run.status) liveEl.textContent = `Run is now ${run.status}`;
      lastStatus = run.status;
      if (snapshot !== last) {
        renderHeader(headerEl, run, steps, base, () => load().catch(() => {}));
        renderIO(ioEl, run);
        renderOutbound(outboundEl, outbound.outbound);
        renderLog(logEl, log);
      }
      renderTimeline(timelineEl, run, steps, more, open, shown, () => { last = ''; load().catch(() => {}); }, children);
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

// A step's bar on the timeline: from when it started to when it ended, or to now while it is in
// progress. The parts after now (a sleep's or a backoff's remaining time, a wait's timeout) are
// drawn to the end of the scale and named in the text, so a 24-hour timeout does not squash
// the rest of the run into a pixel.
function renderTimeline(el, run, steps, more, open, shown, redraw, children) {
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
    const bar = h('span', { class: `bar k-${s.kind} st-${s.status}` });
    bar.style.left = pct(start);
    bar.style.width = width(start, end);
    const track = h('span', { class: 'track', 'aria-hidden': 'true' }, bar);
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
      stepDetails(s, children[s.key]));
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
  } else if (s.kind === 'wait') {
    let what = `for event “${s.event}”`;
    if (s.match && Object.keys(s.match).length) what += ` matching ${JSON.stringify(s.match)}`;
    parts.push(s.status === 'waiting' ? `waiting ${what}${until ? ` until ${until}` : ', no timeout'}` : what);
  }
  return h('span', { class: 'desc', text: parts.join(' · ') });
}

function stepDetails(s, child) {
  const kids = [];
  const facts = h('dl', { class: 'facts small' },
    child ? fact('Child run', runLink(child.workflow, child.id), h('span', { class: 'muted' }, ' ', child.status)) : null,
    fact('Sequence', String(s.seq)), fact('Started', when(s.startedAt)), fact('Ended', when(s.completedAt)),
    s.wakeAt ? fact(s.kind === 'run' ? 'Next attempt' : s.kind === 'wait' ? 'Times out' : 'Wakes', when(s.wakeAt)) : null,
    s.attempt ? fact('Attempts', String(s.attempt)) : null,
    s.event ? fact('Event', h('code', { text: s.event })) : null);
  kids.push(facts);
  if (s.match !== undefined) kids.push(jsonBlock('Match', s.match));
  if (s.output !== undefined) kids.push(jsonBlock(s.kind === 'wait' ? 'Event payload' : 'Output', s.output));
  if (s.error) kids.push(jsonBlock(s.status === 'retrying' ? 'Last error' : 'Error', s.error));
  if (s.outbound && s.outbound.length) kids.push(outboundTable(s.outbound, `HTTP requests of ${s.key}`));
  return h('div', { class: 'step-body' }, kids);
}

function renderOutbound(el, records) {
  replace(el, h('h2', { id: 'ob-title', text: 'Outbound HTTP audit' }),
    records.length ? outboundTable(records, 'Every outbound request and redirect hop the run made') : h('p', { class: 'muted', text: 'The run made no outbound HTTP requests.' }));
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

