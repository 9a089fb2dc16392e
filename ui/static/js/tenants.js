// Tenants (admin token only): the tenants, each one's limits (its overrides and what applies),
// outbound policy and tokens.
import { h, replace, when, toast, field, confirmDialog, jsonBlock } from './dom.js';
import { call, enc, session } from './api.js';
import { go } from './nav.js';

export const LIMITS = [
  ['memoryPages', 'Memory pages (64 KiB each) per instance'],
  ['activationTimeoutMs', 'Activation timeout (ms)'],
  ['concurrency', 'Concurrent activations'],
  ['maxModuleBytes', 'Max module bytes'],
  ['maxInputBytes', 'Max input bytes'],
  ['maxOutputBytes', 'Max output bytes'],
  ['maxStepOutputBytes', 'Max step output bytes'],
  ['maxEventBytes', 'Max event bytes'],
  ['maxStepsPerRun', 'Max steps per run'],
  ['maxBufferedEvents', 'Max buffered events per run'],
];

export async function tenantsView(el, parts) {
  if (!session.admin) {
    replace(el, h('h1', { text: 'Tenants' }), h('p', { text: 'Managing tenants needs the admin token: sign in with it.' }));
    return null;
  }
  if (parts.length) return tenantView(el, parts[0]);
  const page = await call('GET', '/tenants', { admin: true });
  const id = h('input', { name: 'id', required: true, autocomplete: 'off', pattern: '[a-z0-9][a-z0-9_-]*' });
  const err = h('p', { class: 'error', role: 'alert' });
  const create = h('form', { class: 'card', 'aria-labelledby': 'new-title', on: { submit: async (ev) => {
    ev.preventDefault();
    err.textContent = '';
    try {
      const res = await call('POST', '/tenants', { admin: true, body: { id: id.value.trim(), limits: {} } });
      await showSecret(`Tenant ${res.tenant.id} created`, res.token.secret);
      go(`#/tenants/${enc(res.tenant.id)}`);
    } catch (e) { err.textContent = e.message; }
  } } },
  h('h2', { id: 'new-title', text: 'New tenant' }), field('Tenant id', id), err,
  h('button', { type: 'submit', class: 'primary', text: 'Create tenant' }));

  replace(el, h('h1', { text: 'Tenants' }),
    h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, ['Tenant', 'Limits it overrides', 'Created'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, page.tenants.map((t) => h('tr', {},
        h('th', { scope: 'row' }, h('a', { href: `#/tenants/${enc(t.id)}`, text: t.id })),
        h('td', { text: Object.keys(t.limits || {}).join(', ') || 'none: the daemon\'s defaults' }),
        h('td', {}, when(t.createdAt))))))),
    create);
  return null;
}

// showSecret shows a new token's secret once: the API never shows it again.
// tokensCard is a tenant's tokens, each with a revoke button behind a confirmation, and a form
// that creates one and shows its secret once. path is the tokens resource: the signed-in
// tenant's own (/tokens) or, with the admin token (admin), a tenant's (/tenants/{id}/tokens).
// done is what follows a change: the page drawn again.
export function tokensCard({ path, admin, titleId, toks, createdFor = '', revokeNote, done }) {
  const name = h('input', { name: 'name', autocomplete: 'off' });
  return h('section', { class: 'card', 'aria-labelledby': titleId },
    h('h2', { id: titleId, text: 'Tokens' }),
    h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, ['Token', 'Name', 'Created', 'Revoked', ''].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, toks.tokens.map((k) => h('tr', {},
        h('td', { class: 'mono', text: k.id }), h('td', { text: k.name || '' }), h('td', {}, when(k.createdAt)), h('td', {}, when(k.revokedAt)),
        h('td', {}, k.revokedAt ? null : h('button', { type: 'button', class: 'danger small', text: 'Revoke…', 'aria-label': `Revoke token ${k.id}`, on: { click: async () => {
          const ok = await confirmDialog({ title: `Revoke token ${k.id}?`, message: revokeNote, confirm: 'Revoke', danger: true });
          if (!ok) return;
          try { await call('DELETE', `${path}/${enc(k.id)}`, { admin }); toast(`Token ${k.id} revoked`); done(); } catch (e) { toast(e.message, 'error'); }
        } } }))))))),
    h('form', { class: 'inline-form', on: { submit: async (ev) => {
      ev.preventDefault();
      try {
        const tok = await call('POST', path, { admin, body: name.value.trim() ? { name: name.value.trim() } : {} });
        await showSecret(`Token ${tok.id} created${createdFor}`, tok.secret);
        done();
      } catch (e) { toast(e.message, 'error'); }
    } } }, field('New token name', name), h('button', { type: 'submit', class: 'primary', text: 'Create token' })));
}

export async function showSecret(title, secret) {
  await confirmDialog({ title, message: 'The token\'s secret is shown only now. Copy it somewhere safe.', confirm: 'Done',
    body: [h('pre', { class: 'secret', tabindex: '0' }, h('code', { text: secret }))] });
}

async function tenantView(el, id) {
  const base = `/tenants/${enc(id)}`;
  const [t, toks] = await Promise.all([call('GET', base, { admin: true }), call('GET', `${base}/tokens`, { admin: true })]);
  const eff = t.effectiveLimits || {};

  // Limits: one field per limit; empty means the daemon's default, shown as the placeholder.
  const inputs = {};
  const limitFields = LIMITS.map(([k, label]) => {
    const input = h('input', { type: 'number', min: '1', name: k, inputmode: 'numeric', placeholder: `default: ${eff[k] ?? '—'}` });
    if (t.limits[k] !== undefined) input.value = String(t.limits[k]);
    inputs[k] = input;
    return field(label, input);
  });
  const hosts = h('textarea', { name: 'allowedHosts', rows: '4', spellcheck: 'false', class: 'mono', placeholder: (eff.allowedHosts || []).join('\n') || 'none' });
  hosts.value = (t.limits.allowedHosts || []).join('\n');
  const err = h('p', { class: 'error', role: 'alert' });
  const limitsForm = h('form', { class: 'card', 'aria-labelledby': 'limits-title', on: { submit: async (ev) => {
    ev.preventDefault();
    err.textContent = '';
    const limits = {};
    for (const [k] of LIMITS) if (inputs[k].value !== '') limits[k] = Number(inputs[k].value);
    const list = hosts.value.split('\n').map((s) => s.trim()).filter(Boolean);
    if (list.length) limits.allowedHosts = list;
    const ok = await confirmDialog({ title: `Set ${id}'s limits?`, message: 'These overrides replace the tenant\'s current ones; an empty field takes the daemon\'s default.',
      confirm: 'Save limits', body: [jsonBlock('New overrides', limits)] });
    if (!ok) return;
    try {
      await call('PATCH', base, { admin: true, body: { limits } });
      toast(`Limits of ${id} saved`);
      go(`#/tenants/${enc(id)}`);
    } catch (e) { err.textContent = e.message; }
  } } },
  h('h2', { id: 'limits-title', text: 'Limits' }),
  h('p', { class: 'muted', text: 'Empty fields take the daemon\'s default, shown greyed.' }),
  h('div', { class: 'grid' }, limitFields),
  h('h3', { text: 'Outbound policy' }),
  field('Allowed hosts, one per line', hosts, 'api.example.com, *.example.com, https://api.example.com:8443 or 192.0.2.7 (ABI.md §4.11). Empty: the daemon\'s --allowed-hosts.'),
  err, h('button', { type: 'submit', class: 'primary', text: 'Save limits…' }));

  const tokens = tokensCard({
    path: `${base}/tokens`, admin: true, titleId: 'tok-title', toks, createdFor: ` for ${id}`,
    revokeNote: 'Every client using it is refused from now on.', done: () => go(`#/tenants/${enc(id)}`),
  });

  replace(el, h('p', {}, h('a', { href: '#/tenants', text: '← Tenants' })), h('h1', { text: `Tenant ${id}` }),
    h('p', {}, 'Created ', when(t.createdAt)),
    limitsForm, tokens,
    h('details', { class: 'card' }, h('summary', { text: 'Effective limits (JSON)' }), jsonBlock('Effective limits', eff)));
  return null;
}
