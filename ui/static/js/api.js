// The console's one way to the REST API: same origin, JSON, the session's bearer token.

const TOKEN = 'wfhost.token';        // the tenant token the console acts with
const ADMIN = 'wfhost.adminToken';   // the admin token, when the user signed in with it
const TENANT = 'wfhost.tenant';      // the tenant the tenant token belongs to

// session keeps the tokens in sessionStorage: they live as long as the tab and are never
// written to localStorage or a cookie, so closing the tab signs out and no other site's
// request carries them.
export const session = {
  get token() { return sessionStorage.getItem(TOKEN) || ''; },
  get admin() { return sessionStorage.getItem(ADMIN) || ''; },
  get tenant() { return sessionStorage.getItem(TENANT) || ''; },
  setTenant(token, tenant) {
    sessionStorage.setItem(TOKEN, token);
    sessionStorage.setItem(TENANT, tenant);
  },
  clearTenant() {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(TENANT);
  },
  setAdmin(token) { sessionStorage.setItem(ADMIN, token); },
  // the tokens the admin's tenant switcher made, by tenant id: {id, secret}
  switchTokens() {
    try { return JSON.parse(sessionStorage.getItem('wfhost.switch') || '{}'); } catch { return {}; }
  },
  rememberSwitch(tenant, id, secret) {
    const m = this.switchTokens();
    m[tenant] = { id, secret };
    sessionStorage.setItem('wfhost.switch', JSON.stringify(m));
  },
  clear() { sessionStorage.clear(); },
};

// ApiError is an API error answer: {"error": {"code", "message"}} and its status.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// call sends one request. opts: body (JSON-encoded unless it is FormData), admin (use the admin
// token), token (use this one), query (URLSearchParams or object).
export async function call(method, path, opts = {}) {
  const token = opts.token ?? (opts.admin ? session.admin : session.token);
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  let body;
  if (opts.body instanceof FormData) body = opts.body;
  else if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  let url = `/v1${path}`;
  if (opts.query) {
    const q = new URLSearchParams(opts.query).toString();
    if (q) url += `?${q}`;
  }
  const res = await fetch(url, { method, headers, body, credentials: 'omit', cache: 'no-store', signal: opts.signal });
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const e = data && data.error;
    throw new ApiError(res.status, e ? e.code : 'http_' + res.status, e ? e.message : `${res.status} ${res.statusText}`);
  }
  return data;
}

export const enc = encodeURIComponent;
