// The console's service overview page, drawn from GET /admin/api/overview: lookups and refusals a
// minute over the last hour and each minute's p99 (uPlot charts), the upstream providers' breakers
// and calls, and the lookups by outcome since start. Lookups only: a help page, a probe or a request
// for a path that serves nothing is not counted. Kept apart from console.js, which calls render()
// with its element builder and puts what it returns on the page. A module (index.html): its top level
// is its own scope; render() is the one name it gives the page.
const COLOURS = { lookups: '#0b5394', refusals: '#b45f06', p99: '#741b47' };
const FAILED = ['transient', 'permanent', 'timeout', 'invalid'];

/** A minute's count as a rate a minute (the last span may be shorter than a minute). */
const perMinute = (m, n) => (m.ms > 0 ? Math.round(((n * 60000) / m.ms) * 10) / 10 : 0);

function figure(el, id, caption, attrs) {
  const box = el('figure', Object.assign({ class: 'chart', id }, attrs));
  const captionId = `${id}-caption`;
  const plot = el('div', { role: 'img', 'aria-labelledby': captionId });
  box.append(plot, el('figcaption', { id: captionId, text: caption }));
  return { box, plot };
}

function draw(plot, xs, series, yLabel) {
  if (!window.uPlot) return;
  const opts = {
    width: Math.min(900, window.innerWidth - 60),
    height: 220,
    series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.colour, width: 2, spanGaps: false }))],
    axes: [{}, { label: yLabel }],
  };
  new window.uPlot(opts, [xs, ...series.map((s) => s.values)], plot);
}

function charts(el, minutes) {
  const xs = minutes.map((m) => m.at / 1000);
  const lookups = minutes.reduce((t, m) => t + m.lookups, 0);
  const refusals = minutes.reduce((t, m) => t + m.refusals, 0);
  const traffic = figure(
    el,
    'traffic-chart',
    `Lookups and refusals a minute, last hour: ${lookups} lookup(s), ${refusals} refused (credit, daily limit, rate)`,
    { 'data-lookups': String(lookups), 'data-refusals': String(refusals), 'data-minutes': String(minutes.length) },
  );
  draw(
    traffic.plot,
    xs,
    [
      { label: 'lookups a minute', colour: COLOURS.lookups, values: minutes.map((m) => perMinute(m, m.lookups)) },
      { label: 'refused a minute', colour: COLOURS.refusals, values: minutes.map((m) => perMinute(m, m.refusals)) },
    ],
    'a minute',
  );
  const p99 = figure(el, 'p99-chart', 'Lookup latency p99 each minute, last hour (ms, the bucket it falls in)', {
    'data-minutes': String(minutes.length),
  });
  draw(
    p99.plot,
    xs,
    [{ label: 'p99 (ms)', colour: COLOURS.p99, values: minutes.map((m) => (m.p99 === null ? null : m.p99 * 1000)) }],
    'ms',
  );
  return [traffic.box, p99.box];
}

function table(el, caption, headings, rows) {
  return el(
    'table',
    {},
    el('caption', { text: caption }),
    el('thead', {}, el('tr', {}, ...headings.map((h) => el('th', { scope: 'col', text: h })))),
    el(
      'tbody',
      {},
      ...rows.map((cells) =>
        el('tr', {}, el('th', { scope: 'row', text: cells[0] }), ...cells.slice(1).map((c) => el('td', { text: c }))),
      ),
    ),
  );
}

function upstreams(el, list) {
  if (list.length === 0)
    return el('p', { text: 'No upstream provider is configured (PROVIDERS names only the store).' });
  const n = (calls, outcomes) => String(outcomes.reduce((t, o) => t + (calls[o] || 0), 0));
  const breaker = { closed: 'closed', open: 'open: calls fail at once', half_open: 'half-open: one probe call' };
  return table(
    el,
    'Upstream providers: their circuit breaker now, and their calls over the last hour',
    ['Provider', 'Breaker', 'Found', 'Not found', 'Failed', 'Refused by the breaker'],
    list.map((u) => [
      u.provider,
      breaker[u.breaker] || u.breaker,
      n(u.calls, ['found']),
      n(u.calls, ['not_found']),
      n(u.calls, FAILED),
      n(u.calls, ['breaker_open']),
    ]),
  );
}

/** The page's content, below its heading. */
function render(o, el) {
  const ms = (s) => (s === null ? 'no lookups yet' : `${(s * 1000).toFixed(1)} ms or less`);
  const outcomes = Object.keys(o.requests)
    .sort()
    .map((outcome) => [outcome, String(o.requests[outcome])]);
  return [
    el('p', {
      text: 'Lookups only (not help pages, probes or paths that serve nothing); a point a minute, refreshed every 10 seconds while this page is open.',
    }),
    ...(o.minutes.length === 0
      ? [el('p', { text: 'The first minute is being counted: the charts fill in as the minutes pass.' })]
      : []),
    ...charts(el, o.minutes),
    el('h2', { text: 'Upstream providers' }),
    upstreams(el, o.upstreams),
    el('h2', { text: 'Since start' }),
    table(el, 'Lookups by outcome since start', ['Outcome', 'Lookups'], outcomes),
    el(
      'dl',
      {},
      el('dt', { text: 'Latency p50' }),
      el('dd', { text: ms(o.latency.p50) }),
      el('dt', { text: 'Latency p99' }),
      el('dd', { text: ms(o.latency.p99) }),
    ),
  ];
}

window.reglookupOverview = { render };
