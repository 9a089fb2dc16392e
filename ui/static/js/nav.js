// Navigation within the console's hash routes, apart from app.js so views can navigate
// without importing the router (and the router imports the views).

// parseHash splits "#/runs/wf/id?x=1" into ["runs","wf","id"] and its query.
export function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const i = raw.indexOf('?');
  const path = i < 0 ? raw : raw.slice(0, i);
  const q = i < 0 ? '' : raw.slice(i + 1);
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q) };
}

// go navigates to a route, and renders it again when it is the current one.
export function go(route) {
  if (location.hash === route) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = route;
}

// runHref is the console's address of a run.
export function runHref(workflow, id) {
  return `#/runs/${encodeURIComponent(workflow)}/${encodeURIComponent(id)}`;
}
