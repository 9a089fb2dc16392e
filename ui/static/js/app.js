// The console's entry point: sign-in, the header and a hash router. Routes live in the
// fragment (#/runs?status=failed, #/runs/<workflow>/<id>), so every view has a URL to share and
// the daemon serves one page with no server-side routing.
import { h, replace, toast, confirmDialog, field } from './dom.js';
import { call, session, enc, ApiError } from './api.js';
import { runsView } from './runs.js';
import { runView } from './run.js';
import { workflowsView } from './workflows.js';
import { tenantsView } from './tenants.js';
import { settingsView } from './settings.js';
import { parseHash, go } from './nav.js';

const main = () => document.getElementById('main');
let cleanup = null;

// Each route renders into a container of its own, and a view that finishes loading after the
// user has moved on (hash changes do not wait for fetches) writes only into its detached
// container and is stopped at once, so it can never draw over the page that replaced it.
let generation = 0;

async function route_() {
  if (cleanup) { cleanup(); cleanup = null; }
  const gen = ++generation;
  const { parts, query } = parseHash();
  const el = h('div', { class: 'view' });
  replace(main(), el);
  renderHeader();
  const signedIn = session.token || session.admin;
  if (!signedIn || parts[0] === 'signin') { signInView(el); return; }
  const section = parts[0] || (session.token ? 'runs' : 'tenants');
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.section === section) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  let stop = null;
  try {
    if (section === 'tenants') {
      stop = await tenantsView(el, parts.slice(1), query);
    } else if (!session.token) {
      replace(el, h('h1', { text: 'Choose a tenant' }),
        h('p', { text: 'The admin token manages tenants; runs and workflows belong to a tenant. Pick one with the tenant switcher at the top, or open the Tenants page.' }));
    } else if (section === 'runs' && parts.length >= 3) {
      stop = await runView(el, parts[1], parts[2]);
    } else if (section === 'runs') {
      stop = await runsView(el, query);
    } else if (section === 'workflows') {
      stop = await workflowsView(el);
    } else if (section === 'tenant') {
      stop = await settingsView(el);
    } else {
      replace(el, h('h1', { text: 'Not found' }), h('p', {}, 'No such page. ', h('a', { href: '#/runs', text: 'Back to the runs' })));
    }
  } catch (e) {
    if (gen !== generation) return;
    if (e instanceof ApiError && e.status === 401) {
      toast(`Signed out: ${e.message}`, 'error');
      session.clear();
      go('#/signin');
      return;
    }
    replace(el, h('h1', { text: 'Something went wrong' }), h('p', { class: 'error', role: 'alert', text: e.message }));
    return;
  }
  if (gen !== generation) { if (stop) stop(); return; }
  cleanup = stop;
}

function renderHeader() {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  const signedIn = !!(session.token || session.admin);
  nav.hidden = !signedIn;
  document.getElementById('nav-tenants').hidden = !session.admin;
  document.getElementById('nav-tenant').hidden = !session.token;
  if (!signedIn) { replace(who); return; }
  const out = h('button', { type: 'button', class: 'secondary small', text: 'Sign out', on: { click: signOut } });
  if (!session.admin) {
    replace(who, h('span', { class: 'muted' }, 'tenant ', h('strong', { text: session.tenant })), out);
    return;
  }
  const select = h('select', { id: 'tenant-switch', 'aria-label': 'Act as tenant' },
    h('option', { value: '', text: '(admin only)' }));
  replace(who, h('label', { for: 'tenant-switch', class: 'muted', text: 'Tenant' }), select, out);
  call('GET', '/tenants', { admin: true }).then((page) => {
    for (const t of page.tenants) select.appendChild(h('option', { value: t.id, text: t.id }));
    select.value = session.tenant;
  }).catch(() => {});
  select.addEventListener('change', () => switchTenant(select.value, select));
}

// switchTenant lets the admin act as a tenant. The API has no way for the admin token to call a
// tenant's routes, so the console makes a token named "console" for that tenant (after asking),
// keeps it for this tab only, and lists it on the Tenants page, where it can be revoked.
async function switchTenant(tenant, select) {
  if (!tenant) { session.clearTenant(); go('#/tenants'); return; }
  const made = session.switchTokens()[tenant];
  let token = made && made.secret;
  if (!token) {
    const ok = await confirmDialog({
      title: `Act as tenant ${tenant}?`,
      message: `The admin token cannot call a tenant's routes, so the console will create a token named "console" for ${tenant} and keep it in this tab. You can revoke it on the Tenants page.`,
      confirm: 'Create token and switch',
    });
    if (!ok) { select.value = session.tenant; return; }
    try {
      const tok = await call('POST', `/tenants/${enc(tenant)}/tokens`, { admin: true, body: { name: 'console' } });
      token = tok.secret;
      session.rememberSwitch(tenant, tok.id, tok.secret);
    } catch (e) {
      toast(e.message, 'error');
      select.value = session.tenant;
      return;
    }
  }
  session.setTenant(token, tenant);
  toast(`Acting as tenant ${tenant}`);
  go('#/runs');
}

// signOut forgets the tokens; the admin's sign-out also revokes the tokens its tenant switcher
// made, so acting as a tenant leaves no live token behind.
async function signOut() {
  if (session.admin) {
    const made = Object.entries(session.switchTokens());
    const results = await Promise.allSettled(made.map(([tenant, t]) =>
      call('DELETE', `/tenants/${enc(tenant)}/tokens/${enc(t.id)}`, { admin: true })));
    const failed = results.filter((r) => r.status === 'rejected').length;
    if (failed) toast(`${failed} console token${failed === 1 ? '' : 's'} could not be revoked: see the Tenants page`, 'error');
  }
  session.clear();
  go('#/signin');
}

function signInView(el) {
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, spellcheck: 'false' });
  const err = h('p', { class: 'error', role: 'alert' });
  const form = h('form', { class: 'card signin', on: { submit: async (ev) => {
    ev.preventDefault();
    err.textContent = '';
    const token = input.value.trim();
    try {
      const t = await call('GET', '/tenant', { token });
      session.clear();
      session.setTenant(token, t.id);
      go('#/runs');
      return;
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401) { err.textContent = e.message; return; }
    }
    try {
      await call('GET', '/tenants', { token });
      session.clear();
      session.setAdmin(token);
      go('#/tenants');
    } catch (e) {
      err.textContent = e instanceof ApiError && e.status === 401 ? 'That token is neither a tenant token nor the admin token.' : e.message;
    }
  } } },
  h('h1', { text: 'Sign in' }),
  field('Token', input, 'A tenant token (make run keeps the default tenant\'s in ~/.local/share/wfhost/token), or the daemon\'s --admin-token. It is kept in this tab only.'),
  err,
  h('button', { type: 'submit', class: 'primary', text: 'Sign in' }));
  replace(el, form);
  input.focus();
}

window.addEventListener('hashchange', route_);
// A module script runs once the document is parsed, so the page is there to render into.
route_();
