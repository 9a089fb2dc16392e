// DOM building without markup strings. Everything the API returns is tenant-controlled (run
// inputs, outputs, errors, payloads), so text only ever goes in through textContent or
// attribute values, never through an HTML parser: a string can never become an element or a
// handler. (ui/handler_test.go fails on any of the parsing sinks.)

// h(tag, props, ...children) makes an element. props: "class", "text" (textContent), "on"
// (event name -> listener), "dataset", boolean DOM properties (hidden, disabled, checked,
// selected, open) and anything else as an attribute. children: nodes, strings (as text), arrays,
// null/false (skipped).
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') continue; // set after the children: a <select>'s options first
    else if (['hidden', 'disabled', 'checked', 'selected', 'open', 'required', 'multiple'].includes(k)) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  if (props && props.value !== undefined && props.value !== null) el.value = props.value;
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// replace empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// pretty formats JSON for a <pre>: indented, or the raw text if it is not JSON.
export function pretty(v) {
  if (v === undefined) return '';
  if (typeof v === 'string') {
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
  }
  return JSON.stringify(v, null, 2);
}

// jsonBlock is a labelled, formatted JSON value.
export function jsonBlock(label, value) {
  return h('figure', { class: 'json' },
    h('figcaption', { text: label }),
    h('pre', { tabindex: '0' }, h('code', { text: pretty(value) })));
}

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

// when shows a time as a <time> with the exact instant in its title.
export function when(iso) {
  if (!iso) return h('span', { class: 'muted', text: '—' });
  const d = new Date(iso);
  return h('time', { datetime: iso, title: d.toISOString(), text: d.toLocaleString() });
}

// ago says how long before now iso was, for lists.
export function ago(iso) {
  if (!iso) return '—';
  const s = (new Date(iso).getTime() - Date.now()) / 1000;
  const abs = Math.abs(s);
  if (abs < 60) return rtf.format(Math.round(s), 'second');
  if (abs < 3600) return rtf.format(Math.round(s / 60), 'minute');
  if (abs < 86400) return rtf.format(Math.round(s / 3600), 'hour');
  return rtf.format(Math.round(s / 86400), 'day');
}

// duration formats milliseconds for people.
export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms === 0) return '0';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  if (ms < 3600000) return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
  return `${Math.floor(ms / 3600000)} h ${Math.round((ms % 3600000) / 60000)} min`;
}

export function badge(status) {
  return h('span', { class: `badge s-${String(status).replace(/[^a-z_]/g, '')}`, text: String(status).replace('_', ' ') });
}

let toastTimer;
// toast announces the outcome of an action to everyone, screen readers included.
export function toast(msg, kind = 'ok') {
  const el = document.getElementById('toast');
  el.textContent = msg;
  el.className = `toast ${kind}`;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 6000);
}

// confirmDialog asks before an action with a native <dialog>: modal, focus-trapped, closed by
// Escape. body is extra content (fields); resolves to the form's values, or null when cancelled.
export function confirmDialog({ title, message, confirm = 'Confirm', danger = false, body = [] }) {
  return new Promise((resolve) => {
    const form = h('form', { method: 'dialog' },
      h('h2', { id: 'dlg-title', text: title }),
      message ? h('p', { text: message }) : null,
      body,
      h('div', { class: 'actions' },
        h('button', { type: 'submit', value: 'cancel', class: 'secondary', text: 'Cancel', formnovalidate: true }),
        h('button', { type: 'submit', value: 'ok', class: danger ? 'danger' : 'primary', text: confirm })));
    const dlg = h('dialog', { 'aria-labelledby': 'dlg-title' }, form);
    document.body.appendChild(dlg);
    dlg.addEventListener('close', () => {
      const ok = dlg.returnValue === 'ok';
      const values = ok ? Object.fromEntries(new FormData(form)) : null;
      dlg.remove();
      resolve(values);
    });
    dlg.showModal();
  });
}

// field is a labelled input.
export function field(label, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2)}`;
  input.id = id;
  let hintEl = null;
  if (hint) {
    hintEl = h('small', { id: `${id}-hint`, class: 'hint', text: hint });
    input.setAttribute('aria-describedby', hintEl.id);
  }
  return h('div', { class: 'field' }, h('label', { for: id, text: label }), input, hintEl);
}
