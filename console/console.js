// The reglookup console: a page of the admin listener that calls the admin API with the token held
// in this tab's sessionStorage (never a cookie), sent as Authorization: Bearer. No inline script,
// no HTML built from strings: every value is set as text. Charts are uPlot, served from the package.
// A module (index.html): its top level is its own scope.

const KEY = 'reglookup.adminToken';
const main = document.getElementById('main');
const nav = document.getElementById('nav');

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function show(title, ...children) {
  main.replaceChildren(el('h1', { text: title }), ...children);
  document.title = `${title} · reglookup console`;
  main.focus();
}

class Refused extends Error {}

async function api(method, path, body, headers) {
  const h = Object.assign({ Authorization: `Bearer ${sessionStorage.getItem(KEY) || ''}` }, headers || {});
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
  });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401) throw new Refused((data && data.message) || 'the token was refused');
  if (!res.ok) throw new Error((data && data.message) || `HTTP ${res.status}`);
  return data;
}

function signIn(message) {
  nav.hidden = true;
  const input = el('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true });
  const status = el('p', { id: 'sign-in-status', role: 'alert', class: 'error', text: message || '' });
  const form = el(
    'form',
    {
      'aria-label': 'Sign in',
      onsubmit: async (ev) => {
        ev.preventDefault();
        sessionStorage.setItem(KEY, input.value.trim());
        try {
          await api('GET', '/admin/api/users?limit=1');
          nav.hidden = false;
          location.hash = '#/callers';
          route();
        } catch (e) {
          sessionStorage.removeItem(KEY);
          status.textContent = e instanceof Refused ? 'That token was refused.' : e.message;
        }
      },
    },
    el('label', { for: 'token', text: 'Admin token' }, input),
    el('button', { type: 'submit', text: 'Sign in' }),
  );
  show(
    'Sign in',
    el('p', {
      text: 'Give an admin token (ADMIN_TOKENS). It is kept in this tab only, until you sign out or close it.',
    }),
    form,
    status,
  );
  input.focus();
}

const pages = { cursors: [null], search: '' };

async function callers() {
  const at = pages.cursors[pages.cursors.length - 1];
  const q = new URLSearchParams({ limit: '20' });
  if (pages.search) q.set('search', pages.search);
  if (at) q.set('cursor', at);
  const data = await api('GET', `/admin/api/users?${q}`);
  const search = el('input', { id: 'search', name: 'search', type: 'search', value: pages.search });
  const form = el(
    'form',
    {
      role: 'search',
      'aria-label': 'Find a caller',
      onsubmit: (ev) => {
        ev.preventDefault();
        pages.search = search.value.trim();
        pages.cursors = [null];
        void guard(callers);
      },
    },
    el('label', { for: 'search', text: 'Name or prefix contains' }, search),
    el('button', { type: 'submit', text: 'Search' }),
  );
  const rows = data.users.map((u) =>
    el(
      'tr',
      {},
      el('td', {}, el('a', { href: `#/caller/${encodeURIComponent(u.name)}`, text: u.name })),
      el('td', { text: `${u.prefix}…` }),
      el('td', { text: u.enabled ? 'yes' : 'no' }),
      el('td', { text: u.credits === null ? 'unlimited' : String(u.credits) }),
      el('td', { text: String(u.usedToday) }),
    ),
  );
  const table = el(
    'table',
    {},
    el('caption', {
      text: `Callers${pages.search ? ` matching “${pages.search}”` : ''}, page ${pages.cursors.length}`,
    }),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['Name', 'Username starts', 'Enabled', 'Credits', 'Used today'].map((h) =>
          el('th', { scope: 'col', text: h }),
        ),
      ),
    ),
    el('tbody', {}, ...rows),
  );
  const prev = el('button', {
    type: 'button',
    text: 'Previous page',
    disabled: pages.cursors.length === 1,
    onclick: () => (pages.cursors.pop(), void guard(callers)),
  });
  const next = el('button', {
    type: 'button',
    text: 'Next page',
    disabled: data.next === null,
    onclick: () => (pages.cursors.push(data.next), void guard(callers)),
  });
  show('Callers', form, rows.length ? table : el('p', { text: 'No caller matches.' }), el('p', {}, prev, ' ', next));
}

function lastDays(n) {
  const out = [];
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  for (let i = n - 1; i >= 0; i--) out.push(new Date(today - i * 86400000).toISOString().slice(0, 10));
  return out;
}

const COLOURS = ['#0b5394', '#b45f06', '#38761d', '#741b47', '#134f5c', '#990000', '#7f6000'];

function usageChart(rows) {
  const days = lastDays(30);
  const ops = [...new Set(rows.map((r) => r.operation))].sort();
  const index = new Map(days.map((d, i) => [d, i]));
  const series = ops.map(() => days.map(() => 0));
  for (const r of rows) {
    const i = index.get(r.day);
    if (i !== undefined) series[ops.indexOf(r.operation)][i] += r.found + r.notFound;
  }
  const total = series.reduce((t, s) => t + s.reduce((a, b) => a + b, 0), 0);
  const box = el('figure', { class: 'chart', id: 'usage-chart', 'data-total': String(total) });
  const caption = el('figcaption', {
    id: 'usage-caption',
    text: `Lookups a day by operation, last 30 days (UTC): ${total} in all${ops.length ? ` (${ops.join(', ')})` : ''}`,
  });
  const plot = el('div', { role: 'img', 'aria-labelledby': 'usage-caption' });
  box.append(plot, caption);
  if (window.uPlot) {
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const opts = {
      width: Math.min(900, window.innerWidth - 60),
      height: 260,
      series: [{}, ...ops.map((op, i) => ({ label: op, stroke: COLOURS[i % COLOURS.length], width: 2 }))],
      axes: [{}, { label: 'lookups' }],
    };
    new window.uPlot(opts, [xs, ...series], plot);
  }
  return box;
}

// A new username for the caller: shown on this page this once (the service keeps only its hash), the
// old one working until the time the answer gives.
function rotateForm(path) {
  const out = el('p', { id: 'rotate-status', role: 'status' });
  const button = el('button', { type: 'submit', text: 'Issue a new username' });
  const form = el(
    'form',
    {
      'aria-label': 'New username',
      onsubmit: async (ev) => {
        ev.preventDefault();
        button.disabled = true;
        try {
          const r = await api('POST', `${path}/rotate`);
          out.replaceChildren(
            'New username (shown this once; give it to the caller privately): ',
            el('code', { id: 'new-username', text: r.username }),
            `. The old one works until ${r.oldUntil}.`,
          );
          out.className = 'ok';
        } catch (e) {
          out.textContent = e.message;
          out.className = 'error';
          button.disabled = false;
        }
      },
    },
    button,
  );
  return [el('h2', { text: 'Username' }), form, out];
}

async function caller(name) {
  const path = `/admin/api/users/${encodeURIComponent(name)}`;
  const [u, usage] = await Promise.all([api('GET', path), api('GET', `${path}/usage?days=30`)]);
  const fmt = (v, none) => (v === null ? none : String(v));
  const details = el(
    'dl',
    {},
    ...[
      ['Username starts', `${u.prefix}…`],
      ['Credits', fmt(u.credits, 'unlimited')],
      ['Enabled', u.enabled ? 'yes' : 'no'],
      ['Daily limit', fmt(u.dailyLimit, 'none')],
      ['Rate', u.rate === null ? 'the service default' : u.rate === 0 ? 'none' : `${u.rate}/s`],
      ['Allowed from', u.allow.length ? u.allow.join(', ') : 'anywhere'],
    ].flatMap(([k, v]) => [
      el('dt', { text: k }),
      el('dd', { id: `field-${k.toLowerCase().replace(/ /g, '-')}`, text: v }),
    ]),
  );
  const amount = el('input', { id: 'amount', name: 'amount', type: 'number', step: '1', required: true });
  const status = el('p', { id: 'top-up-status', role: 'status' });
  let key = null;
  const button = el('button', { type: 'submit', text: 'Add credits' });
  const form = el(
    'form',
    {
      'aria-label': 'Top up',
      onsubmit: async (ev) => {
        ev.preventDefault();
        // One key per top-up: a second click while it is on its way, or a retry, is the same top-up.
        key = key || crypto.randomUUID();
        button.disabled = true;
        try {
          const r = await api('POST', `${path}/credits`, { amount: Number(amount.value) }, { 'Idempotency-Key': key });
          key = null;
          await caller(name);
          document.getElementById('top-up-status').textContent = `Done: ${r.balance} credit(s) now.`;
          document.getElementById('top-up-status').className = 'ok';
        } catch (e) {
          status.textContent = e.message;
          status.className = 'error';
          button.disabled = false;
        }
      },
    },
    el('label', { for: 'amount', text: 'Credits to add (negative to take)' }, amount),
    button,
  );
  show(
    `Caller ${u.name}`,
    details,
    el('h2', { text: 'Top up' }),
    u.credits === null ? el('p', { text: 'This caller has unlimited credits.' }) : form,
    status,
    el('h2', { text: 'Lookups' }),
    usageChart(usage.usage),
    ...rotateForm(path),
    el('h2', { text: 'Batch lookups' }),
    batchForm(name),
    el('p', {}, el('a', { href: '#/callers', text: 'Back to the callers' })),
  );
}

// A CSV of lookups (operation,registration,state) run as the caller's own batch job: charged to it,
// paced by its limits. The results come back as CSV, fetched with the token and saved from memory.
function batchForm(name) {
  const file = el('input', { id: 'batch-file', name: 'file', type: 'file', accept: '.csv,text/csv', required: true });
  const status = el('p', { id: 'batch-status', role: 'status' });
  const button = el('button', { type: 'submit', text: 'Run as this caller' });
  const progress = (j) =>
    `Job ${j.id}: ${j.status}, ${j.done} of ${j.rows} rows (${j.found} found, ${j.notFound} not found, ` +
    `${j.refused} refused)${j.note ? `. ${j.note}` : ''}`;
  const follow = async (id) => {
    const j = await api('GET', `/admin/api/batch/${encodeURIComponent(id)}`);
    status.textContent = progress(j);
    if (j.status === 'running') return void setTimeout(() => void follow(id).catch(fail), 1000);
    const res = await fetch(`/admin/api/batch/${encodeURIComponent(id)}/results`, {
      headers: { Authorization: `Bearer ${sessionStorage.getItem(KEY) || ''}` },
      credentials: 'omit',
    });
    const link = el('a', {
      href: window.URL.createObjectURL(await res.blob()),
      download: `batch-${id}.csv`,
      text: 'Results (CSV)',
    });
    status.append(' ', link);
    button.disabled = false;
  };
  const fail = (e) => {
    status.textContent = e.message;
    status.className = 'error';
    button.disabled = false;
  };
  return el(
    'form',
    {
      'aria-label': 'Batch lookups',
      onsubmit: async (ev) => {
        ev.preventDefault();
        button.disabled = true;
        status.className = '';
        try {
          const csv = await file.files[0].text();
          const job = await api('POST', `/admin/api/users/${encodeURIComponent(name)}/batch`, { csv });
          await follow(job.id);
        } catch (e) {
          fail(e);
        }
      },
    },
    el('label', { for: 'batch-file', text: 'CSV file (header: operation,registration,state)' }, file),
    button,
    status,
  );
}

// The page itself is drawn by overview.js.
async function overview() {
  const o = await api('GET', '/admin/api/overview');
  show('Service overview', ...window.reglookupOverview.render(o, el));
}

let timer = null;

async function guard(fn, ...args) {
  try {
    await fn(...args);
  } catch (e) {
    if (e instanceof Refused) {
      sessionStorage.removeItem(KEY);
      signIn('The token was refused; sign in again.');
    } else show('Something went wrong', el('p', { class: 'error', role: 'alert', text: e.message }));
  }
}

function route() {
  clearInterval(timer);
  if (!sessionStorage.getItem(KEY)) return signIn();
  nav.hidden = false;
  const hash = location.hash || '#/callers';
  const m = /^#\/caller\/(.+)$/.exec(hash);
  if (m) return void guard(caller, decodeURIComponent(m[1]));
  if (hash === '#/overview') {
    timer = setInterval(() => void guard(overview), 10000);
    return void guard(overview);
  }
  return void guard(callers);
}

document.getElementById('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(KEY);
  location.hash = '';
  signIn('Signed out.');
});
window.addEventListener('hashchange', route);
route();
