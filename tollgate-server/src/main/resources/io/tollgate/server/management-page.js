// Tollgate's management page: reads the admin API of the port that served it, every few seconds.
// Every value from the server is written with textContent, never as HTML: keys are clients' own strings.
'use strict';

const REFRESH_MS = 2000;
const TOKEN = 'tollgate.management-token'; // sessionStorage: this tab only, gone when it closes
const SVG = 'http://www.w3.org/2000/svg';

const state = { token: sessionStorage.getItem(TOKEN), timer: null, policies: [], topChosen: false };

class Unauthorized extends Error {}

const $ = (id) => document.getElementById(id);

async function api(method, path) {
  const headers = {};
  if (state.token) {
    headers.Authorization = 'Bearer ' + state.token;
  }
  const response = await fetch(path, { method, headers, cache: 'no-store' });
  if (response.status === 401) {
    throw new Unauthorized();
  }
  return response;
}

async function json(path) {
  const response = await api('GET', path);
  const body = await response.json();
  if (!response.ok) {
    throw new Error(body.detail || response.status + ' ' + path);
  }
  return body;
}

async function problem(response) {
  try {
    return (await response.json()).detail || String(response.status);
  } catch (e) {
    return String(response.status);
  }
}

function element(name, text, className) {
  const node = document.createElement(name);
  if (text !== undefined && text !== null) {
    node.textContent = text;
  }
  if (className) {
    node.className = className;
  }
  return node;
}

function askForToken(refused) {
  clearTimeout(state.timer);
  $('app').hidden = true;
  $('login').hidden = false;
  $('token-error').textContent = refused
    ? 'The management port refused this token.'
    : '';
  $('token-input').value = '';
  $('token-input').focus();
}

async function openPage() {
  try {
    const running = await json('/admin/policies');
    $('login').hidden = true;
    $('app').hidden = false;
    showConfiguration(running);
    await refresh();
  } catch (e) {
    if (e instanceof Unauthorized) {
      const refused = state.token !== null;
      state.token = null;
      sessionStorage.removeItem(TOKEN);
      askForToken(refused);
    } else {
      $('updated').textContent = 'Cannot read the admin API: ' + e.message;
    }
  }
}

async function refresh() {
  clearTimeout(state.timer);
  try {
    const [rates, store] = await Promise.all([json('/admin/rates'), json('/admin/store')]);
    showStore(store);
    showRates(rates);
    if (!state.topChosen) {
      chooseMostRefused(rates);
    }
    await showTop();
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (e) {
    if (e instanceof Unauthorized) {
      askForToken(true);
      return;
    }
    $('updated').textContent = 'not updated: ' + e.message;
  }
  state.timer = setTimeout(refresh, REFRESH_MS);
}

// Until the operator picks a policy, the top table shows the one refusing most over the last minute.
function chooseMostRefused(rates) {
  let most = 0;
  for (const series of rates.policies) {
    const lastMinute = series.refused.slice(-Math.round(60 / rates.interval_seconds));
    const refused = lastMinute.reduce((sum, value) => sum + value, 0);
    if (refused > most && state.policies.includes(series.policy)) {
      most = refused;
      $('top-policy').value = series.policy;
    }
  }
}

function showConfiguration(running) {
  state.policies = Object.keys(running.policies).sort();
  for (const id of ['top-policy', 'lookup-policy']) {
    const select = $(id);
    const chosen = select.value;
    select.replaceChildren(...state.policies.map((name) => element('option', name)));
    if (state.policies.includes(chosen)) {
      select.value = chosen;
    }
  }
  const policies = $('policies-table').tBodies[0];
  policies.replaceChildren(...state.policies.map((name) => {
    const row = element('tr');
    row.append(element('td', name));
    const limits = running.policies[name].limits
      .map((limit) => limit.capacity + ' at once, refill ' + limit.refill)
      .join('; ');
    row.append(element('td', limits));
    return row;
  }));
  const rules = $('rules-table').tBodies[0];
  rules.replaceChildren(...(running.rules || []).map((rule, index) => {
    const row = element('tr');
    row.append(element('td', String(index)), element('td', rule.path),
      element('td', (rule.methods || ['any']).join(', ')), element('td', rule.key),
      element('td', rule.policy || (rule['policy-from'] ? 'per plan' : '')), element('td', String(rule.cost)),
      element('td', rule['dry-run'] ? 'yes' : 'no'));
    return row;
  }));
  $('rules-table').hidden = rules.children.length === 0;
}

function showStore(store) {
  $('store-description').textContent = store.store;
  const badge = $('store-badge');
  badge.textContent = store.answers ? 'store answers' : 'store down';
  badge.className = 'badge ' + (store.answers ? 'up' : 'down');
  $('store-state').textContent = store.answers ? 'answers' : 'does not answer: ' + store.problem;
  const latency = store.latency;
  $('store-latency').textContent = !latency
    ? 'none (in memory, or no call yet)'
    : latency.calls === 0
      ? 'no calls'
      : 'p50 ' + ms(latency.p50_ms) + ', p99 ' + ms(latency.p99_ms) + ', p99.9 ' + ms(latency.p999_ms)
        + ' (' + latency.calls + ' calls)';
  const nodes = $('store-nodes');
  nodes.hidden = store.nodes.length === 0;
  nodes.tBodies[0].replaceChildren(...store.nodes.map((node) => {
    const row = element('tr');
    row.append(element('td', node.node), element('td', node.circuit.replace('_', ' '), 'circuit-' + node.circuit));
    return row;
  }));
}

function ms(value) {
  return value < 1 ? value.toFixed(2) + ' ms' : value.toFixed(1) + ' ms';
}

function perSecond(value) {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

function showRates(rates) {
  const charts = $('charts');
  if (rates.policies.length === 0) {
    return;
  }
  const kept = new Map([...charts.querySelectorAll('figure')].map((figure) => [figure.dataset.policy, figure]));
  const figures = rates.policies.map((series) => {
    const figure = kept.get(series.policy) || newChart(series.policy);
    drawChart(figure, series, rates.interval_seconds);
    return figure;
  });
  charts.replaceChildren(...figures);
}

function newChart(policy) {
  const figure = element('figure', null, 'chart');
  figure.dataset.policy = policy;
  const caption = element('figcaption');
  caption.append(element('span', policy), element('span', '', 'now'));
  figure.append(caption);
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('viewBox', '0 0 600 140');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'Decisions per second of ' + policy);
  figure.append(svg);
  return figure;
}

const MEASURES = ['allowed', 'refused', 'degraded'];
const LEFT = 40;
const PAD_TOP = 8;
const WIDTH = 552;
const HEIGHT = 112;

// The x axis spans the last 15 minutes once the server has run that long; before, the whole minutes it has
// run, so that a page opened on a new server shows its traffic rather than a line at the edge.
function drawChart(figure, series, intervalSeconds) {
  const longest = Math.round(15 * 60 / intervalSeconds);
  const minutes = Math.max(1, Math.ceil(series.allowed.length * intervalSeconds / 60));
  const intervals = Math.min(longest, Math.round(minutes * 60 / intervalSeconds));
  const spanSeconds = intervals * intervalSeconds;
  let top = 0;
  for (const measure of MEASURES) {
    for (const value of series[measure]) {
      top = Math.max(top, value);
    }
  }
  top = niceCeiling(top);
  const svg = figure.querySelector('svg');
  const children = [];
  for (const fraction of [0, 0.5, 1]) {
    const y = PAD_TOP + HEIGHT * (1 - fraction);
    const line = document.createElementNS(SVG, 'line');
    line.setAttribute('class', 'grid');
    line.setAttribute('x1', LEFT);
    line.setAttribute('x2', LEFT + WIDTH);
    line.setAttribute('y1', y);
    line.setAttribute('y2', y);
    const label = document.createElementNS(SVG, 'text');
    label.setAttribute('x', LEFT - 4);
    label.setAttribute('y', y + 3);
    label.setAttribute('text-anchor', 'end');
    label.textContent = perSecond(top * fraction);
    children.push(line, label);
  }
  // Time labels at a round step back from now: every 10 s for a minute, ..., every 5 min for 15 minutes.
  const step = [10, 15, 30, 60, 120, 300].find((seconds) => spanSeconds / seconds <= 5) || 300;
  for (let seconds = 0; seconds <= spanSeconds; seconds += step) {
    const label = document.createElementNS(SVG, 'text');
    label.setAttribute('x', LEFT + WIDTH * (1 - seconds / spanSeconds));
    label.setAttribute('y', PAD_TOP + HEIGHT + 14);
    label.setAttribute('text-anchor', seconds === 0 ? 'end' : seconds + step > spanSeconds ? 'start' : 'middle');
    label.textContent = seconds === 0 ? 'now' : seconds < 60 ? '−' + seconds + ' s' : '−' + seconds / 60 + ' min';
    children.push(label);
  }
  for (const measure of MEASURES) {
    const values = series[measure];
    const offset = intervals - values.length; // the newest value is always at the right edge
    const points = values.map((value, i) => {
      const x = LEFT + WIDTH * (offset + i + 1) / intervals;
      const y = PAD_TOP + HEIGHT * (1 - (top === 0 ? 0 : value / top));
      return x.toFixed(1) + ',' + y.toFixed(1);
    });
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('class', measure);
    line.setAttribute('points', points.join(' '));
    children.push(line);
  }
  svg.replaceChildren(...children);
  const last = (measure) => series[measure].length === 0 ? 0 : series[measure][series[measure].length - 1];
  const now = figure.querySelector('.now');
  now.textContent = MEASURES.map((measure) => measure + ' ' + perSecond(last(measure)) + '/s').join(' · ');
  for (const measure of MEASURES) {
    now.dataset[measure] = String(last(measure));
  }
}

function niceCeiling(value) {
  if (value <= 0) {
    return 1;
  }
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) {
    if (value <= step * power) {
      return step * power;
    }
  }
  return 10 * power;
}

async function showTop() {
  const policy = $('top-policy').value;
  if (!policy) {
    return;
  }
  const response = await api('GET', '/admin/top?by=refused&limit=10&policy=' + encodeURIComponent(policy)
    + '&window=' + $('top-window').value);
  const body = await response.json();
  const rows = $('top-table').tBodies[0];
  if (!response.ok) {
    $('top-summary').textContent = body.detail;
    rows.replaceChildren();
    return;
  }
  $('top-summary').textContent = body.total + ' refusals in the window; each count is at most '
    + body.error_bound + ' over the truth (keys shown ' + body.keys_shown + ')';
  // Rows are kept across refreshes, keyed by policy and digest, so that a button under the pointer stays the
  // same element while the counts change.
  const kept = new Map([...rows.children].map((row) => [row.dataset.id, row]));
  rows.replaceChildren(...body.keys.map((key) => {
    const id = policy + '\n' + key.digest;
    const row = kept.get(id) || newTopRow(policy, key, id);
    row.querySelector('.count').textContent = String(key.count);
    row.querySelector('.error-bound').textContent = String(key.error);
    return row;
  }));
}

function newTopRow(policy, key, id) {
  const row = element('tr');
  row.dataset.id = id;
  row.dataset.digest = key.digest;
  const actions = element('td');
  const inspect = element('button', 'Inspect', 'inspect');
  inspect.type = 'button';
  inspect.addEventListener('click', () => inspectListed(policy, key));
  const reset = element('button', 'Reset', 'reset danger');
  reset.type = 'button';
  reset.addEventListener('click', () => resetListed(policy, key));
  actions.append(inspect, reset);
  row.append(element('td', key.key, 'key'), element('td', '', 'number count'),
    element('td', '', 'number error-bound'), actions);
  return row;
}

function listedPath(policy, key) {
  return '/admin/buckets/' + encodeURIComponent(policy) + '?digest=' + encodeURIComponent(key.digest);
}

async function inspectListed(policy, key) {
  await inspect(listedPath(policy, key), $('top-status'), $('top-bucket'));
}

async function resetListed(policy, key) {
  await reset(listedPath(policy, key), key.key, $('top-status'), $('top-bucket'));
}

async function inspect(path, status, view) {
  try {
    const response = await api('GET', path);
    if (!response.ok) {
      status.textContent = await problem(response);
      view.hidden = true;
      return;
    }
    view.textContent = JSON.stringify(await response.json(), null, 2);
    view.hidden = false;
    status.textContent = '';
  } catch (e) {
    failed(e, status);
  }
}

async function reset(path, shown, status, view) {
  try {
    const response = await api('DELETE', path);
    if (response.status !== 204) {
      status.textContent = await problem(response);
      return;
    }
    view.hidden = true;
    status.textContent = 'Reset ' + shown + ': its next request finds full buckets.';
  } catch (e) {
    failed(e, status);
  }
}

function failed(e, status) {
  if (e instanceof Unauthorized) {
    askForToken(true);
  } else {
    status.textContent = e.message;
  }
}

function lookupPath() {
  return '/admin/buckets/' + encodeURIComponent($('lookup-policy').value) + '/'
    + encodeURIComponent($('lookup-key').value);
}

document.addEventListener('DOMContentLoaded', () => {
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    state.token = $('token-input').value.trim();
    sessionStorage.setItem(TOKEN, state.token);
    openPage();
  });
  $('top-policy').addEventListener('change', () => {
    state.topChosen = true;
    showTop();
  });
  $('top-window').addEventListener('change', () => showTop());
  $('lookup-form').addEventListener('submit', (event) => {
    event.preventDefault();
    if ($('lookup-key').value) {
      inspect(lookupPath(), $('lookup-status'), $('lookup-bucket'));
    }
  });
  $('lookup-reset').addEventListener('click', () => {
    if ($('lookup-key').value) {
      reset(lookupPath(), $('lookup-key').value, $('lookup-status'), $('lookup-bucket'));
    }
  });
  openPage();
});
