// Workflows and modules: what is deployed, each version's module, and a deploy by upload.
import { h, replace, when, toast, field, confirmDialog } from './dom.js';
import { call, enc } from './api.js';
import { go } from './nav.js';

export async function workflowsView(el) {
  const [wfs, mods] = await Promise.all([call('GET', '/workflows'), call('GET', '/modules')]);

  const file = h('input', { type: 'file', name: 'module', accept: '.wasm,application/wasm', required: true });
  const replaceBox = h('input', { type: 'checkbox', name: 'replace', id: 'replace' });
  const err = h('p', { class: 'error', role: 'alert' });
  const upload = h('form', { class: 'card', 'aria-labelledby': 'deploy-title', on: { submit: async (ev) => {
    ev.preventDefault();
    err.textContent = '';
    if (!file.files.length) { err.textContent = 'Choose a .wasm file.'; return; }
    const f = file.files[0];
    const ok = await confirmDialog({
      title: 'Deploy this module?',
      message: `${f.name} (${f.size.toLocaleString()} bytes) will be compiled and its workflows bound${replaceBox.checked ? ', replacing versions that are already deployed with other code' : ''}.`,
      confirm: 'Deploy',
    });
    if (!ok) return;
    const body = new FormData();
    body.append('module', f);
    try {
      const res = await call('POST', '/modules', { body, query: replaceBox.checked ? { replace: 'true' } : undefined });
      toast(`Deployed ${res.digest.slice(0, 12)}: ${res.workflows.map((w) => `${w.name}@${w.version}`).join(', ')}`);
      go('#/workflows');
    } catch (e) { err.textContent = e.message; }
  } } },
  h('h2', { id: 'deploy-title', text: 'Deploy a module' }),
  field('WebAssembly module', file),
  h('div', { class: 'field inline' }, replaceBox, h('label', { for: 'replace', text: 'Replace versions deployed with other code' })),
  err,
  h('button', { type: 'submit', class: 'primary', text: 'Upload and deploy' }));

  replace(el,
    h('h1', { text: 'Workflows and modules' }),
    h('section', { 'aria-labelledby': 'wf-title' },
      h('h2', { id: 'wf-title', text: 'Workflows' }),
      wfs.workflows.length === 0 ? h('p', { class: 'muted', text: 'Nothing is deployed yet.' }) :
        h('div', { class: 'table-wrap' }, h('table', {},
          h('thead', {}, h('tr', {}, ['Workflow', 'Latest version', 'Versions', 'Runs by status', 'Paused'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, wfs.workflows.map((w) => h('tr', {},
            h('th', { scope: 'row' }, h('a', { href: `#/runs?workflow=${enc(w.name)}`, text: w.name })),
            h('td', { text: w.latestVersion }),
            h('td', { text: w.versions.join(', ') }),
            h('td', {}, h('ul', { class: 'inline-list' }, Object.entries(w.runCounts || {}).map(([s, n]) =>
              h('li', {}, h('a', { href: `#/runs?workflow=${enc(w.name)}&status=${enc(s)}`, text: `${n} ${s}` }))))),
            h('td', {}, pauseCell(w)))))))),
    h('section', { 'aria-labelledby': 'mod-title' },
      h('h2', { id: 'mod-title', text: 'Modules' }),
      mods.modules.length === 0 ? h('p', { class: 'muted', text: 'No modules.' }) :
        h('div', { class: 'table-wrap' }, h('table', {},
          h('thead', {}, h('tr', {}, ['Digest (sha256)', 'Size', 'ABI', 'Uploaded'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, mods.modules.map((m) => h('tr', {},
            h('td', {}, h('code', { class: 'mono digest', title: m.digest, text: m.digest })),
            h('td', { class: 'num', text: `${(m.size / 1024).toFixed(0)} KiB` }),
            h('td', { class: 'num', text: String(m.abiVersion) }),
            h('td', {}, when(m.createdAt)))))))),
    upload);
  return null;
}

// pauseCell is a workflow's pause: what is paused, and a button to pause or resume the whole
// workflow behind a confirmation (a version is paused with the CLI or the API).
function pauseCell(w) {
  const versions = w.pausedVersions || [];
  const state = w.paused ? 'all versions' : versions.length ? `versions ${versions.join(', ')}` : 'no';
  const pausing = !w.paused;
  const btn = h('button', { type: 'button', class: 'secondary', text: pausing ? `Pause ${w.name}…` : `Resume ${w.name}…` });
  btn.addEventListener('click', async () => {
    const ok = await confirmDialog(pausing ? {
      title: `Pause workflow ${w.name}?`,
      message: `Its live runs finish the step they are in and hold, and every run started for it is created paused, until it is resumed.`,
      confirm: 'Pause workflow',
    } : {
      title: `Resume workflow ${w.name}?`,
      message: 'The runs its pause held go on, and new runs start as usual.',
      confirm: 'Resume workflow',
    });
    if (!ok) return;
    try {
      const r = await call('POST', `/workflows/${enc(w.name)}/${pausing ? 'pause' : 'resume'}`);
      toast(pausing ? `${w.name} paused: ${r.runs} runs paused or pausing` : `${w.name} resumed: ${r.runs} runs resumed`);
      go('#/workflows');
    } catch (e) { toast(e.message, 'error'); }
  });
  return h('div', { class: 'inline-list' }, h('span', { text: state }), btn);
}
