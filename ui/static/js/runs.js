// The runs list: filters (kept in the URL), counts per status, cursor paging, live refresh,
// and a form to start a run.
import { h, replace, badge, ago, duration, toast, field } from './dom.js';
import { call, enc, ApiError } from './api.js';
import { go, runHref } from './nav.js';

const STATUSES = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled', 'continued', 'nondeterministic'];
const REFRESH_MS = 3000;
const PAGE = 50;
const COUNTS_EVERY = 5; // list refreshes per counts refresh: every 15 s

// apiQuery turns the console's URL query into the API's: the same names, with input
// filters written one per line as path=value in "input" (input.customer.id=42 in the API).
// countQuery is the same selection for GET .../runs/counts: no status and no page.
function countQuery(q) {
  const out = new URLSearchParams();
  for (const k of ['version', 'idempotencyKey', 'since', 'until']) if (q.get(k)) out.set(k, q.get(k));
  for (const line of (q.get('input') || '').split('\n')) {
    const i = line.indexOf('=');
    if (i <= 0) continue;
    out.set(`input.${line.slice(0, i).trim()}`, line.slice(i + 1).trim());
  }
  return out;
}
function apiQuery(q, cursor) {
  const out = countQuery(q);
  if (q.get('status')) out.set('status', q.get('status'));
  out.set('limit', String(PAGE));
  if (cursor) out.set('cursor', cursor);
  return out;
}

// localInput and isoOf convert between datetime-local values (the user's zone) and RFC 3339.
function localInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const off = d.getTimezoneOffset() * 60000;
  return new Date(d.getTime() - off).toISOString().slice(0, 16);
}
function isoOf(local) { return local ? new Date(local).toISOString() : ''; }

export async function runsView(el, query) {
  // The workflows (for the workflow filter and the start form) and the counts both count runs
  // (about half a second at 100,000 runs on the embedded store): the list does not wait for
  // them.
  const workflow = query.get('workflow') || '';
  const countsPath = workflow ? `/workflows/${enc(workflow)}/runs/counts` : '/runs/counts';
  const workflowsCall = call('GET', '/workflows');
  workflowsCall.catch(() => {}); // handled in loadWorkflows, which awaits it after the first page
  const countsCall = call('GET', countsPath, { query: countQuery(query) });
  countsCall.catch(() => {}); // handled in loadCounts
  const cursors = [];  // the cursors of the pages before this one, for "Newer"
  let cursor = '';     // this page's cursor; '' is the first page
  let timer = null;
  let stopped = false;

  // Filters.
  const wfSel = h('select', { name: 'workflow', value: workflow },
    h('option', { value: '', text: 'All workflows' }),
    workflow ? h('option', { value: workflow, text: workflow }) : null);
  const stSel = h('select', { name: 'status', value: query.get('status') || '' },
    h('option', { value: '', text: 'Any status' }), STATUSES.map((s) => h('option', { value: s, text: s })));
  const since = h('input', { type: 'datetime-local', name: 'since', value: localInput(query.get('since')) });
  const until = h('input', { type: 'datetime-local', name: 'until', value: localInput(query.get('until')) });
  const version = h('input', { name: 'version', autocomplete: 'off', spellcheck: 'false', value: query.get('version') || '' });
  const idemKey = h('input', { name: 'idempotencyKey', autocomplete: 'off', spellcheck: 'false', value: query.get('idempotencyKey') || '' });
  const input = h('textarea', { name: 'input', rows: '2', spellcheck: 'false', placeholder: 'email=ada@example.com' });
  input.value = query.get('input') || '';
  const filters = h('form', { class: 'filters', 'aria-label': 'Filter runs', on: { submit: (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    if (wfSel.value) q.set('workflow', wfSel.value);
    if (stSel.value) q.set('status', stSel.value);
    if (version.value.trim()) q.set('version', version.value.trim());
    if (idemKey.value.trim()) q.set('idempotencyKey', idemKey.value.trim());
    if (since.value) q.set('since', isoOf(since.value));
    if (until.value) q.set('until', isoOf(until.value));
    if (input.value.trim()) q.set('input', input.value.trim());
    const s = q.toString();
    go(s ? `#/runs?${s}` : '#/runs');
  } } },
  field('Workflow', wfSel), field('Status', stSel), field('Version', version), field('Idempotency key', idemKey),
  field('Created from', since), field('Created before', until),
  field('Input fields', input, 'One per line: path=value, e.g. customer.id=42 (a JSON value or a string).'),
  h('div', { class: 'filter-actions' },
    h('button', { type: 'submit', class: 'primary', text: 'Apply filters' }),
    h('a', { href: '#/runs', class: 'button secondary', text: 'Clear' })));

  // Counts per status of the runs the filters (all but the status) select, over every page:
  // GET .../runs/counts, refreshed every COUNTS_EVERY list refreshes.
  const base = new URLSearchParams(query);
  const countLink = (status, label, n) => {
    const q = new URLSearchParams(base);
    if (status) q.set('status', status); else q.delete('status');
    const current = (query.get('status') || '') === status;
    return h('li', {}, h('a', { href: `#/runs?${q}`, 'aria-current': current ? 'true' : null, class: `count ${status ? 's-' + status : ''}` },
      h('span', { class: 'n', text: n === null ? '…' : String(n) }), ' ', h('span', { text: label })));
  };
  const countList = h('ul', { class: 'counts', 'aria-label': `Runs by status${workflow ? ' of ' + workflow : ''}` });
  let workflows = [];
  function showCounts(c) {
    replace(countList, countLink('', 'all', c ? c.total : null),
      STATUSES.map((s) => countLink(s, s, c ? (c.counts && c.counts[s]) || 0 : null)));
  }
  showCounts(null);
  async function loadCounts(call_) {
    try {
      const c = await call_;
      if (!stopped) showCounts(c);
    } catch { /* the list says what is wrong; the counts stay unknown */ }
  }
  async function loadWorkflows(call_) {
    try {
      const page = await call_;
      if (stopped) return;
      workflows = page.workflows;
      for (const w of workflows) if (w.name !== workflow) wfSel.appendChild(h('option', { value: w.name, text: w.name }));
      startBtn.disabled = workflows.length === 0;
    } catch { /* the list says what is wrong */ }
  }
  let refreshes = 0;

  // The table.
  const tbody = h('tbody');
  const status = h('p', { class: 'muted', role: 'status', 'aria-live': 'polite' });
  const newer = h('button', { type: 'button', class: 'secondary', text: '← Newer', disabled: true });
  const older = h('button', { type: 'button', class: 'secondary', text: 'Older →', disabled: true });
  const live = h('input', { type: 'checkbox', id: 'live', checked: true });
  let next = '';

  async function load() {
    clearTimeout(timer);
    if (refreshes++ % COUNTS_EVERY === COUNTS_EVERY - 1) {
      loadCounts(call('GET', countsPath, { query: countQuery(query) }));
    }
    try {
      const path = workflow ? `/workflows/${enc(workflow)}/runs` : '/runs';
      const page = await call('GET', path, { query: apiQuery(query, cursor) });
      if (stopped) return;
      next = page.nextCursor;
      replace(tbody, page.runs.length ? page.runs.map(row) : h('tr', {}, h('td', { colspan: '7', class: 'muted', text: 'No runs match.' })));
      newer.disabled = cursors.length === 0;
      older.disabled = !next;
      status.textContent = `${page.runs.length} run${page.runs.length === 1 ? '' : 's'} on this page · updated ${new Date().toLocaleTimeString()}`;
    } catch (e) {
      if (stopped) return;
      // A refused token on the first load goes to the router, which signs out.
      if (e instanceof ApiError && e.status === 401 && refreshes === 1) throw e;
      status.textContent = '';
      replace(tbody, h('tr', {}, h('td', { colspan: '7', class: 'error', role: 'alert', text: e.message })));
    }
    schedule();
  }
  function schedule() {
    clearTimeout(timer);
    if (!stopped && live.checked) timer = setTimeout(() => { if (!document.hidden) load(); else schedule(); }, REFRESH_MS);
  }
  newer.addEventListener('click', () => { cursor = cursors.pop() || ''; load(); });
  older.addEventListener('click', () => { cursors.push(cursor); cursor = next; load(); });
  live.addEventListener('change', schedule);

  // The first page is fetched before the view replaces the last one, so a filter change never
  // shows an empty table in between.
  const startBtn = startForm(() => workflows, workflow);
  await load();
  loadCounts(countsCall);
  loadWorkflows(workflowsCall);
  replace(el,
    h('div', { class: 'title-row' }, h('h1', { text: workflow ? `Runs of ${workflow}` : 'Runs' }), startBtn),
    countList,
    h('details', { class: 'card', open: !!(query.get('since') || query.get('until') || query.get('input') || query.get('version') || query.get('idempotencyKey')) || undefined },
      h('summary', { text: 'Filters' }), filters),
    h('div', { class: 'table-wrap' },
      h('table', { class: 'runs' },
        h('caption', { class: 'sr-only', text: 'Runs, newest first' }),
        h('thead', {}, h('tr', {},
          ['Run', 'Workflow', 'Status', 'Created', 'Duration', 'Input', 'Activations'].map((c, i) => h('th', { scope: 'col', class: `c${i}`, text: c })))),
        tbody)),
    h('div', { class: 'pager' }, newer, older,
      h('label', { class: 'live', for: 'live' }, live, ' Live refresh'), status));
  return () => { stopped = true; clearTimeout(timer); };
}

function row(r) {
  const end = r.completedAt ? new Date(r.completedAt) : null;
  const start = r.startedAt ? new Date(r.startedAt) : new Date(r.createdAt);
  return h('tr', {},
    h('td', { class: 'c0' }, h('a', { href: runHref(r.workflow, r.id), class: 'mono', text: r.id })),
    h('td', { class: 'c1' }, r.workflow, h('span', { class: 'muted', text: ` v${r.version}` })),
    h('td', { class: 'c2' }, badge(r.status)),
    h('td', { class: 'c3' }, h('time', { datetime: r.createdAt, title: new Date(r.createdAt).toLocaleString(), text: ago(r.createdAt) })),
    h('td', { class: 'c4', text: end ? duration(end - start) : '—' }),
    h('td', { class: 'c5' }, h('code', { class: 'clip', text: JSON.stringify(r.input) ?? 'null' })),
    h('td', { class: 'c6 num', text: String(r.activations) }));
}

// startForm is a button that opens a dialog to start a run of a deployed workflow.
function startForm(workflowsNow, preset) {
  const btn = h('button', { type: 'button', class: 'primary', text: 'Start a run', disabled: true });
  btn.addEventListener('click', () => {
    const workflows = workflowsNow();
    const wf = h('select', { name: 'workflow', required: true, value: preset || (workflows[0] && workflows[0].name) },
      workflows.map((w) => h('option', { value: w.name, text: w.name })));
    const version = h('input', { name: 'version', placeholder: 'latest', autocomplete: 'off' });
    const input = h('textarea', { name: 'input', rows: '5', spellcheck: 'false', class: 'mono' });
    input.value = '{}';
    const key = h('input', { name: 'idempotencyKey', autocomplete: 'off' });
    const err = h('p', { class: 'error', role: 'alert' });
    const form = h('form', { on: { submit: async (ev) => {
      ev.preventDefault();
      if (ev.submitter && ev.submitter.value === 'cancel') { dlg.close(); return; }
      err.textContent = '';
      let parsed;
      try { parsed = input.value.trim() ? JSON.parse(input.value) : undefined; } catch (e) { err.textContent = `Input is not JSON: ${e.message}`; input.focus(); return; }
      const body = {};
      if (parsed !== undefined) body.input = parsed;
      if (version.value.trim()) body.version = version.value.trim();
      if (key.value.trim()) body.idempotencyKey = key.value.trim();
      try {
        const run = await call('POST', `/workflows/${enc(wf.value)}/runs`, { body });
        dlg.close();
        toast(`Started run ${run.id}`);
        go(runHref(run.workflow, run.id));
      } catch (e) { err.textContent = e.message; }
    } } },
    h('h2', { id: 'start-title', text: 'Start a run' }),
    field('Workflow', wf), field('Version', version, 'Leave empty for the latest.'),
    field('Input (JSON)', input), field('Idempotency key', key, 'Optional: a second start with the same key returns the first run.'),
    err,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', value: 'cancel', class: 'secondary', text: 'Cancel', formnovalidate: true }),
      h('button', { type: 'submit', value: 'start', class: 'primary', text: 'Start' })));
    const dlg = h('dialog', { 'aria-labelledby': 'start-title' }, form);
    dlg.addEventListener('close', () => dlg.remove());
    document.body.appendChild(dlg);
    dlg.showModal();
  });
  return btn;
}
