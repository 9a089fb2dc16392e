// The signed-in tenant's own page (a tenant token): the limits that apply to it and its
// outbound policy (read-only: only the admin sets them), its tokens and its secrets' names.
import { h, replace, when, toast, field, confirmDialog, jsonBlock } from './dom.js';
import { call, enc, session } from './api.js';
import { go } from './nav.js';
import { LIMITS, tokensCard } from './tenants.js';

export async function settingsView(el) {
  const [t, toks, secrets] = await Promise.all([call('GET', '/tenant'), call('GET', '/tokens'), call('GET', '/secrets')]);
  const eff = t.effectiveLimits || {};
  const reload = () => go('#/tenant');

  const limits = h('div', { class: 'table-wrap' }, h('table', {},
    h('caption', { text: 'The limits that apply: the tenant\'s own where the admin set one, else the daemon\'s default' }),
    h('thead', {}, h('tr', {}, ['Limit', 'Value', 'Set for this tenant'].map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, LIMITS.map(([k, label]) => h('tr', {},
      h('th', { scope: 'row', text: label }),
      h('td', { class: 'num', text: eff[k] === undefined ? '—' : Number(eff[k]).toLocaleString() }),
      h('td', { text: t.limits[k] === undefined ? 'no (default)' : 'yes' }))))));
  const hosts = eff.allowedHosts || [];

  const tokens = tokensCard({
    path: '/tokens', admin: false, titleId: 'own-tok-title', toks, done: reload,
    revokeNote: 'Every client using it is refused from now on, this console too if it is the token you signed in with.',
  });

  const secName = h('input', { name: 'name', autocomplete: 'off', required: true });
  const secValue = h('input', { name: 'value', type: 'password', autocomplete: 'new-password', required: true });
  const secretsEl = h('section', { class: 'card', 'aria-labelledby': 'sec-title' },
    h('h2', { id: 'sec-title', text: 'Secrets' }),
    h('p', { class: 'muted', text: 'Values go in and never come out: steps read them, and they are redacted from everything a run writes.' }),
    secrets.secrets.length === 0 ? h('p', { class: 'muted', text: 'No secrets.' }) :
      h('div', { class: 'table-wrap' }, h('table', {},
        h('thead', {}, h('tr', {}, ['Name', 'Created', 'Updated', ''].map((c) => h('th', { scope: 'col', text: c })))),
        h('tbody', {}, secrets.secrets.map((s) => h('tr', {},
          h('td', { class: 'mono', text: s.name }), h('td', {}, when(s.createdAt)), h('td', {}, when(s.updatedAt)),
          h('td', {}, h('button', { type: 'button', class: 'danger small', text: 'Delete…', 'aria-label': `Delete secret ${s.name}`, on: { click: async () => {
            const ok = await confirmDialog({ title: `Delete secret ${s.name}?`, message: 'Steps that read it fail from now on.', confirm: 'Delete', danger: true });
            if (!ok) return;
            try { await call('DELETE', `/secrets/${enc(s.name)}`); toast(`Secret ${s.name} deleted`); reload(); } catch (e) { toast(e.message, 'error'); }
          } } }))))))),
    h('form', { class: 'inline-form', on: { submit: async (ev) => {
      ev.preventDefault();
      try {
        await call('PUT', `/secrets/${enc(secName.value.trim())}`, { body: { value: secValue.value } });
        toast(`Secret ${secName.value.trim()} saved`);
        reload();
      } catch (e) { toast(e.message, 'error'); }
    } } }, field('Secret name', secName), field('Value', secValue), h('button', { type: 'submit', class: 'primary', text: 'Save secret' })));

  replace(el, h('h1', { text: `Tenant ${t.id}` }),
    h('p', { class: 'muted' }, `Signed in as tenant ${session.tenant}, created `, when(t.createdAt), '.'),
    h('section', { 'aria-labelledby': 'lim-title' }, h('h2', { id: 'lim-title', text: 'Limits' }), limits),
    h('section', { 'aria-labelledby': 'pol-title' }, h('h2', { id: 'pol-title', text: 'Outbound policy' }),
      hosts.length ? h('ul', {}, hosts.map((x) => h('li', {}, h('code', { text: x })))) :
        h('p', { text: 'Steps may call no host: the admin sets allowedHosts.' })),
    tokens, secretsEl,
    h('details', { class: 'card' }, h('summary', { text: 'Effective limits (JSON)' }), jsonBlock('Effective limits', eff)));
  return null;
}
