'use strict';
/* toolhost chat: the page of `toolhost chat --web`. Its contract with the server (API, events, ids, classes) is
   web-spec.md. Every text from the server reaches the DOM through clean() as text nodes; nothing is parsed as
   HTML. No framework: a small model of the open chat (turns -> rounds -> calls) and functions that draw it. */

// ---------------------------------------------------------------- helpers
const $ = (id) => document.getElementById(id);
const SESSION_ENDED = "This page's session has ended or never began: open the address toolhost printed (it works once, in one tab; duplicate the tab for another)";
// The session secret is kept in this tab's session storage (never in a cookie, which every server on 127.0.0.1 would
// be sent) and goes with every request as a bearer token.
const SECRET_KEY = 'toolhost-session';
const STATUS_TEXT = { running: 'running…', waiting: 'waiting for you', ok: 'ok', error: 'error', refused: 'refused' };
const hasOwn = (o, k) => o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k);
const own = (o, k) => (hasOwn(o, k) ? o[k] : undefined);
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v) => v === null || typeof v !== 'object';
const same = (a, b) => a != null && b != null && String(a) === String(b);
const enc = encodeURIComponent;
// Control and bidi characters made visible, as the HTML export does: C0 controls (but \n and \t) in caret form
// (ESC ^[, BEL ^G), DEL ^?, C1 controls and the bidi controls as the literal text <U+202E>.
const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
function clean(text) {
  return (text == null ? '' : String(text)).replace(UNSAFE, (c) => {
    const n = c.charCodeAt(0);
    if (n < 0x20) return '^' + String.fromCharCode(n + 0x40);
    return n === 0x7f ? '^?' : '<U+' + n.toString(16).toUpperCase().padStart(4, '0') + '>';
  });
}
// el('div', {class: 'x'}, child, 'text', [more]): strings and numbers become cleaned text nodes.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'hidden') node.hidden = true;
    else node.setAttribute(k, clean(v));
  }
  return add(node, children);
}
function add(node, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) add(node, c);
    else node.appendChild(c instanceof Node ? c : document.createTextNode(clean(c)));
  }
  return node;
}
const setText = (node, text) => { node.textContent = clean(text); };
const cut = (s, n) => (s.length > n ? s.slice(0, n - 1).trimEnd() + '…' : s);
const firstLine = (s) => String(s || '').trim().split('\n', 1)[0] || '';
function compactJSON(v, max) {
  let s;
  try { s = JSON.stringify(v); } catch (e) { s = String(v); }
  return cut(s === undefined ? '' : s, max);
}
// "120 ms", "1.4 s", "2 min 5 s".
function fmtDuration(ms) {
  if (typeof ms !== 'number' || !isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  const s = Math.round(ms / 1000);
  return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
}
// "averageHigh" -> "Average high", "is_dst" -> "Is dst"; all-capital words (URL) stay.
function humanize(key) {
  const words = String(key).replace(/[_-]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').trim().split(/\s+/).filter(Boolean);
  if (!words.length) return String(key);
  return words.map((w, i) => (w.length > 1 && w === w.toUpperCase() ? w
    : i === 0 ? w[0].toUpperCase() + w.slice(1).toLowerCase() : w.toLowerCase())).join(' ');
}
// Relative times for the chat list: "just now", "5 min ago", "3 h ago", "yesterday", else a date.
const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const yearFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
function makeClock() {
  const now = Date.now(), midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  return { now, midnight: midnight.getTime(), year: midnight.getFullYear() };
}
function relTime(iso, clock) {
  const t = Date.parse(iso);
  if (!isFinite(t)) return '';
  const sec = (clock.now - t) / 1000;
  if (sec < 60) return 'just now';
  if (sec < 3600) return Math.floor(sec / 60) + ' min ago';
  if (t >= clock.midnight) return Math.floor(sec / 3600) + ' h ago';
  if (t >= clock.midnight - 86400000) return 'yesterday';
  const d = new Date(t);
  return (d.getFullYear() === clock.year ? dayFormat : yearFormat).format(d);
}

// ---------------------------------------------------------------- state
const S = {
  model: '', tools: [], toolsByName: new Map(), chats: [], more: false,
  liById: new Map(), sumOf: new WeakMap(),  // list item by chat id; chat summary by list item
  open: null,       // the open chat: {id, nonce, title, running, turns, calls: Map(call id -> {turn, call})}
  loading: null,    // {id, events} while a chat is fetched: its events wait here
  approvals: new Map(),  // chat id -> Map(approval id -> approval), still waiting
  picked: null,     // the tool picked for the next message
  edit: null,       // a rename or a delete confirmation in the list: {node, restore}
  openSeq: 0, listSeq: 0, listTimer: 0, searchTimer: 0, listDirty: false,
  stick: true, ended: false, es: null, lost: false, lostTimer: 0,
  secret: null,     // the session secret, from this tab's session storage
};
let markReady;
S.ready = new Promise((resolve) => { markReady = resolve; });

// ---------------------------------------------------------------- server
class ApiError extends Error { constructor(message, status) { super(message); this.status = status; } }
async function api(method, url, body) {
  const init = { method, credentials: 'omit', headers: { Accept: 'application/json', Authorization: 'Bearer ' + S.secret } };
  if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
  let res;
  try { res = await fetch(url, init); } catch (e) { throw new ApiError('toolhost does not answer: is it still running?', 0); }
  if (res.status === 401) { sessionEnded(); throw new ApiError(SESSION_ENDED, 401); }
  if (!res.ok) {
    let message = '';
    try { const j = await res.json(); if (j && typeof j.error === 'string') message = j.error; } catch (e) { /* not JSON */ }
    throw new ApiError(message || 'The server answered ' + res.status + '.', res.status);
  }
  const text = res.status === 204 ? '' : await res.text();
  return text ? JSON.parse(text) : null;
}
function fail(e) {
  if (!(e && e.status === 401)) showStatus(e && e.message ? e.message : String(e), 'error');  // 401: said already
}
function sessionEnded(message) {
  S.ended = true;
  if (S.es) S.es.abort();
  showStatus(message || SESSION_ENDED, 'error', true);
}
// The printed address's fragment (#token=…, maybe &chat=N) is traded once for the session secret, and taken out of
// the address at once. Without a token, the secret this tab has already.
async function enter() {
  const m = /^#token=([0-9a-f]{1,128})(?:&chat=(\d+))?$/.exec(location.hash);
  if (m) {
    history.replaceState(null, '', location.pathname + location.search + (m[2] ? '#chat=' + m[2] : ''));
    let res = null, answer = null;
    try {
      res = await fetch('/api/session', { method: 'POST', credentials: 'omit', cache: 'no-store',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify({ link: m[1] }) });
      answer = await res.json();
    } catch (e) { /* said below */ }
    const why = answer && typeof answer.error === 'string' ? answer.error : 'toolhost does not answer: is it still running?';
    if (res && res.ok && answer && typeof answer.secret === 'string') sessionStorage.setItem(SECRET_KEY, answer.secret);
    else if (!sessionStorage.getItem(SECRET_KEY)) { sessionEnded(why); return false; }
    else showStatus('This tab goes on with its session; the address was not used: ' + why, 'note');
  }
  S.secret = sessionStorage.getItem(SECRET_KEY);
  if (!S.secret) { sessionEnded(); return false; }
  return true;
}
// #status: the last error or note, with a close button.
function showStatus(text, kind, force) {
  if (S.ended && !force) return;
  $('status').className = 'show ' + (kind || 'error');
  $('status').replaceChildren(el('span', { class: 'status-text' }, text),
    el('button', { type: 'button', class: 'status-close', 'aria-label': 'Dismiss' }, '×'));
}
function clearStatus() { $('status').className = ''; $('status').replaceChildren(); }

// ---------------------------------------------------------------- tool results drawn as UI
const EMPTY_DISPLAY = { title: null, fields: null, columns: null, units: {}, labels: {}, hide: new Set() };
const displayCache = new WeakMap([[EMPTY_DISPLAY, EMPTY_DISPLAY]]);
// A tool's "display" hints, checked once; the checked form maps to itself (renderValue passes it down).
function norm(display) {
  if (!isObj(display)) return EMPTY_DISPLAY;
  if (displayCache.has(display)) return displayCache.get(display);
  const list = (a) => (Array.isArray(a) ? a.filter((s) => typeof s === 'string') : null), map = (m) => (isObj(m) ? m : {});
  const d = { title: typeof display.title === 'string' ? display.title : null, fields: list(display.fields),
    columns: list(display.columns), units: map(display.units), labels: map(display.labels), hide: new Set(list(display.hide)) };
  displayCache.set(display, d).set(d, d);
  return d;
}
const propSchema = (schema, k) => (isObj(schema) && isObj(own(schema.properties, k)) ? schema.properties[k] : null);
const itemsSchema = (schema) => (isObj(schema) && isObj(schema.items) ? schema.items : null);
const schemaKeys = (schema) => (isObj(schema) && isObj(schema.properties) ? Object.keys(schema.properties) : []);
// A field's unit: literal ("°C") or read from another field of the same object ({"field": "temperatureUnit"}).
function unitFor(obj, key, D) {
  const u = own(D.units, key);
  if (typeof u === 'string') return u;
  const v = isObj(u) && typeof u.field === 'string' ? own(obj, u.field) : null;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
}
// The fields that serve as the unit of one of `keys`: not shown on their own.
function unitSources(D, keys) {
  const out = new Set();
  for (const k of keys) { const u = own(D.units, k); if (isObj(u) && typeof u.field === 'string') out.add(u.field); }
  return out;
}
function labelFor(key, schema, D) {
  const l = own(D.labels, key);
  if (typeof l === 'string') return l;
  return schema && typeof schema.title === 'string' ? schema.title : humanize(key);
}
function titleOf(obj, D) {
  const v = D.title ? own(obj, D.title) : null;
  return v != null && isScalar(v) ? v : null;
}
// The keys of an object to show, in order: the hinted fields (top level), else the schema's order, then the value's.
function objectKeys(obj, schema, D, depth) {
  const explicit = depth === 0 && D.fields;
  const keys = explicit ? D.fields.filter((k) => hasOwn(obj, k))
    : [...new Set(schemaKeys(schema).concat(Object.keys(obj)))].filter((k) => hasOwn(obj, k));
  const drop = new Set(D.hide);
  if (!explicit) for (const s of unitSources(D, keys)) drop.add(s);
  if (titleOf(obj, D) != null) drop.add(D.title);  // it is the heading
  return keys.filter((k) => !drop.has(k));
}
// A value by its shape: object -> fields, array -> table, cards or list, scalar -> text. Returns a Node.
function renderValue(value, schema, display, key, depth = 0, unit = null) {
  const D = norm(display);
  if (depth > 12) return document.createTextNode(clean(compactJSON(value, 400)));
  if (Array.isArray(value)) return renderArray(value, schema, D, key, depth, unit);
  if (isObj(value)) return renderObject(value, schema, D, depth);
  return renderScalar(value, unit, false);
}
function renderScalar(value, unit, inline) {
  if (value == null) return el('span', { class: 'null' }, '—');
  if (typeof value === 'boolean') return document.createTextNode(value ? 'yes' : 'no');
  if (typeof value === 'number') {  // as the tool sent it, with its unit
    const f = add(document.createDocumentFragment(), [el('span', { class: 'number' }, String(value))]);
    return unit ? add(f, [' ', el('span', { class: 'unit' }, unit)]) : f;
  }
  const s = String(value);
  if (!inline && (s.length > 120 || s.includes('\n'))) return el('p', { class: 'text-result' }, s);
  return document.createTextNode(clean(s));
}
function renderObject(obj, schema, display, depth = 0) {
  const D = norm(display), keys = objectKeys(obj, schema, D, depth), title = titleOf(obj, D);
  const dl = el('dl', { class: 'fields' }, keys.map((k) => {
    const ps = propSchema(schema, k);
    return el('div', { class: 'field', 'data-key': k }, el('dt', null, labelFor(k, ps, D)),
      el('dd', null, renderValue(obj[k], ps, D, k, depth + 1, unitFor(obj, k, D))));
  }));
  if (title == null) return keys.length ? dl : el('span', { class: 'null' }, '—');
  return add(document.createDocumentFragment(), [el('h4', { class: 'result-title' }, String(title)), keys.length ? dl : null]);
}
const MAX_ITEMS = 200;
function renderArray(arr, schema, D, key, depth, unit) {
  if (!arr.length) return el('span', { class: 'null' }, 'none');
  const items = itemsSchema(schema), shown = arr.slice(0, MAX_ITEMS);
  if (arr.every(isScalar)) {
    return withMore(el('ul', { class: 'values' }, shown.map((v) => el('li', null, renderScalar(v, unit, true)))), arr.length);
  }
  if (!arr.every(isObj)) {
    return withMore(el('ul', { class: 'values mixed' },
      shown.map((v) => el('li', null, renderValue(v, items, D, key, depth + 1, unit)))), arr.length);
  }
  const hinted = hintedColumns(arr, D), auto = hinted ? null : scalarColumns(arr, items, D);
  const rich = arr.some((r) => Object.values(r).some((v) => !isScalar(v) || (typeof v === 'string' && v.length > 80)));
  // A few records with nested lists or long text (or more fields than a table shows) become cards.
  if (arr.length <= 6 && (rich || (auto && auto.length > 6))) {
    return el('div', { class: 'cards' }, arr.map((r) => el('div', { class: 'card' }, renderObject(r, items, D, depth + 1))));
  }
  return renderTable(arr, items, D, hinted || auto.slice(0, 6));
}
function withMore(node, total) {
  if (total <= MAX_ITEMS) return node;
  return add(document.createDocumentFragment(), [node, el('p', { class: 'more' }, 'and ' + (total - MAX_ITEMS) + ' more (see Raw)')]);
}
// The hinted columns these records have (at least two, so that a hint meant for other records does not apply).
function hintedColumns(records, D) {
  if (!D.columns) return null;
  const cols = D.columns.filter((c) => !D.hide.has(c) && records.some((r) => hasOwn(r, c)));
  return cols.length && cols.length >= Math.min(2, D.columns.length) ? cols : null;
}
// The keys holding a scalar in every record: the items schema's order, then as first seen.
function scalarColumns(records, items, D) {
  const order = new Set(schemaKeys(items));
  for (const r of records.slice(0, MAX_ITEMS)) for (const k of Object.keys(r)) order.add(k);
  const cols = [...order].filter((k) => records.some((r) => hasOwn(r, k)) && records.every((r) => isScalar(own(r, k) ?? null)));
  const drop = unitSources(D, cols);
  return cols.filter((k) => !drop.has(k) && !D.hide.has(k));
}
function renderTable(records, items, D, cols) {
  const head = el('tr', null, cols.map((c) => el('th', { scope: 'col' }, labelFor(c, propSchema(items, c), D))));
  const rows = records.slice(0, MAX_ITEMS).map((r) => el('tr', null, cols.map((c) => {
    const v = own(r, c);
    return el('td', { class: typeof v === 'number' ? 'num' : null }, renderCell(v, unitFor(r, c, D)));
  })));
  const table = el('table', { class: 'records' }, el('thead', null, head), el('tbody', null, rows));
  return withMore(el('div', { class: 'table-wrap' }, table), records.length);
}
// A table cell: a scalar as text, a list of scalars joined with ", ", a list of records as a count.
function renderCell(v, unit) {
  if (isObj(v)) return compactJSON(v, 80);
  if (!Array.isArray(v)) return renderScalar(v, unit, true);
  if (!v.every(isScalar)) return v.length === 1 ? '1 item' : v.length + ' items';
  return v.map((x) => (typeof x === 'boolean' ? (x ? 'yes' : 'no') : x == null ? '—' : String(x))).join(', ');
}
// The drawn result of a call (div.result): an error, the structured value, or the text.
function renderResult(call) {
  const box = el('div', { class: 'result' }), out = isObj(call.output) ? call.output : null, st = statusOf(call);
  if (st === 'error' || st === 'refused' || (out && out.isError)) {
    return add(box, [el('div', { class: 'result-error' }, (out && out.text) || STATUS_TEXT[st])]);
  }
  if (!out) return box;
  if (out.value != null) {
    const tool = S.toolsByName.get(call.tool);
    try { return add(box, [renderValue(out.value, tool ? tool.outputSchema : null, tool ? tool.display : null, null)]); }
    catch (e) { box.replaceChildren(); }  // an odd value: show the text instead
  }
  return add(box, [el('pre', { class: 'text-result' }, out.text || '')]);
}
function rawText(out) {
  if (out.value != null) { try { return JSON.stringify(out.value, null, 2); } catch (e) { /* the text then */ } }
  return out.text || '';
}
const statusOf = (call) => (hasOwn(STATUS_TEXT, call.status) ? call.status : 'running');
// section.call: the header line, the drawn result, and the raw output behind a toggle.
function callSection(call) {
  const st = statusOf(call), out = isObj(call.output) ? call.output : null;
  return el('section', { class: 'call ' + st, 'data-call-id': call.id, 'data-tool': call.tool },
    el('div', { class: 'call-head' }, el('code', { class: 'call-tool' }, call.tool),
      el('code', { class: 'call-args' }, compactJSON(call.arguments, 240)),
      el('span', { class: 'call-status' }, STATUS_TEXT[st]), el('span', { class: 'call-duration' }, fmtDuration(call.durationMs))),
    renderResult(call),
    out && el('button', { type: 'button', class: 'raw-toggle', 'aria-expanded': 'false' }, 'Raw'),
    out && el('pre', { class: 'raw', hidden: true }, rawText(out)));
}

// ---------------------------------------------------------------- turns
function newTurn(prompt, tool, running) {
  return { prompt: prompt == null ? null : prompt, tool: tool || null, rounds: [], cur: 0, buffer: '',
    response: null, error: null, running, pending: false, el: null };
}
// A stored turn; in a running one, the text of a last round without calls is the answer being written.
function turnFromServer(tt, running) {
  const t = newTurn(tt.prompt, tt.tool, running);
  t.rounds = (Array.isArray(tt.rounds) ? tt.rounds : []).map((r) => ({
    text: r && typeof r.text === 'string' ? r.text : null, calls: r && Array.isArray(r.calls) ? r.calls.slice() : [] }));
  t.cur = Math.max(0, t.rounds.length - 1);
  t.response = typeof tt.response === 'string' ? tt.response : null;
  t.error = typeof tt.error === 'string' ? (tt.error === 'stopped' ? 'Stopped.' : tt.error) : null;
  const last = t.rounds[t.rounds.length - 1];
  if (running && last && !last.calls.length && last.text) t.buffer = last.text;
  return t;
}
function ensureRound(t) {
  while (t.rounds.length <= t.cur) t.rounds.push({ text: null, calls: [] });
  return t.rounds[t.cur];
}
// article.turn: prompt, calls (with each round's text), answer, error, call graph.
function drawTurn(t) {
  const prompt = el('div', { class: 'prompt' }, t.tool && [el('span', { class: 'picked' }, '@' + t.tool), ' '], t.prompt);
  const calls = el('div', { class: 'calls' }), answer = el('div', { class: 'answer' });
  const toggle = el('button', { type: 'button', class: 'graph-toggle', 'aria-expanded': 'false', hidden: true }, 'Call graph');
  const graph = el('div', { class: 'call-graph', hidden: true });
  const art = el('article', { class: 'turn' }, prompt, calls, answer, toggle, graph);
  t.el = { art, calls, answer, toggle, graph, text: null, sections: new Map() };
  for (const r of t.rounds.filter((r) => r.calls.length)) {
    if (r.text) calls.appendChild(el('p', { class: 'round-text' }, r.text));
    for (const c of r.calls) calls.appendChild(indexCall(t, c));
  }
  const last = t.rounds[t.rounds.length - 1];
  const final = t.response != null ? t.response : last && !last.calls.length && last.text ? last.text : '';
  setAnswer(t, t.running ? t.buffer : final, t.running);
  if (t.error) addError(t, t.error);
  drawGraph(t);
  return art;
}
function indexCall(t, call) {
  const sec = callSection(call);
  t.el.sections.set(String(call.id), sec);
  S.open.calls.set(String(call.id), { turn: t, call });
  return sec;
}
// The answer as paragraphs; while streaming, one growing text node.
function setAnswer(t, text, streaming) {
  const a = t.el.answer;
  a.classList.toggle('streaming', streaming);
  t.el.text = streaming ? document.createTextNode(clean(text)) : null;
  if (streaming) a.replaceChildren(t.el.text);
  else a.replaceChildren(...String(text || '').split(/\n{2,}/).filter((p) => p.trim()).map((p) => el('p', null, p)));
  a.hidden = !streaming && !a.firstChild;
}
function appendText(t, delta) {
  if (!t.el.text) setAnswer(t, t.buffer, true);
  t.buffer += delta;
  t.el.text.appendData(clean(delta));
}
// Text streamed before a round's calls belongs to that round: it moves from the answer to the calls.
function flushText(t) {
  if (t.buffer.trim()) {
    const r = ensureRound(t);
    r.text = (r.text || '') + t.buffer;
    t.el.calls.appendChild(el('p', { class: 'round-text' }, t.buffer));
  }
  t.buffer = '';
  setAnswer(t, '', t.running);
}
function addError(t, text) { t.el.art.insertBefore(el('div', { class: 'error' }, text), t.el.toggle); }
// The call graph, rebuilt from the turn's model whenever a call starts or ends.
function drawGraph(t) {
  t.el.toggle.hidden = !t.rounds.some((r) => r.calls.length);
  t.el.graph.replaceChildren(...t.rounds.map((r, i) => {
    const n = r.calls.length, what = n === 0 ? 'no calls' : n === 1 ? '1 call' : n + ' calls in parallel';
    return el('div', { class: 'round' }, el('div', { class: 'round-title' }, 'round ' + (i + 1) + ' · ' + what),
      el('ul', null, r.calls.map((c) => el('li', { class: 'call ' + statusOf(c), 'data-tool': c.tool },
        el('code', null, c.tool), ' ', compactJSON(c.arguments, 80), ' → ', callSummary(c)))));
  }));
}
function callSummary(c) {
  const out = isObj(c.output) ? c.output : null;
  return [STATUS_TEXT[statusOf(c)], fmtDuration(c.durationMs), out ? cut(firstLine(out.text), 80) : ''].filter(Boolean).join(', ');
}

// ---------------------------------------------------------------- the open chat
function setRunning(on) {
  if (S.open) { S.open.running = on; markRunning(S.open.id, on); }
  $('stop').hidden = !on;
  $('conversation').setAttribute('aria-busy', on ? 'true' : 'false');
}
function showNewChat(clearHash) {
  S.openSeq++;
  S.loading = S.open = null;
  $('conversation').replaceChildren(el('p', { class: 'hint' }, 'Ask anything; @ picks a tool'));
  setText($('chat-title'), 'New chat');
  setRunning(false);
  if (clearHash && location.hash) history.pushState(null, '', location.pathname + location.search);
  markCurrent(null);
  $('message').focus();
}
const hashId = () => { const m = /^#chat=(\d+)$/.exec(location.hash); return m ? Number(m[1]) : null; };
function syncFromHash() {  // back, forward, or an edited address
  if (location.hash.startsWith('#token=')) { location.reload(); return; }  // a new link pasted in: trade it
  const id = hashId();
  if (id == null) { if (S.open && S.open.id != null) showNewChat(false); return; }
  if (!(S.loading ? same(S.loading.id, id) : S.open && same(S.open.id, id))) openChat(id);
}
async function openChat(id, reload) {
  const seq = ++S.openSeq;
  S.loading = { id, events: [] };
  if (!reload && location.hash !== '#chat=' + id) location.hash = 'chat=' + id;
  markCurrent(id);
  if (!reload) $('stop').hidden = true;
  let chat;
  try {
    chat = await api('GET', '/api/chats/' + enc(id));
    await S.ready;  // results are drawn with the tools' schemas
  } catch (e) {
    if (seq !== S.openSeq) return;
    S.loading = null;
    fail(e);
    if (e.status === 404) showNewChat(true);  // the server's message stays in #status
    return;
  }
  if (seq !== S.openSeq) return;
  const waiting = S.loading.events, conv = $('conversation'), keep = reload && !S.stick ? conv.scrollTop : null;
  const turns = Array.isArray(chat.turns) ? chat.turns : [];
  S.loading = null;
  S.open = { id: chat.id != null ? chat.id : id, nonce: null, title: chat.title || '', running: !!chat.running,
    turns: [], calls: new Map() };
  S.open.turns = turns.map((tt, i) => turnFromServer(tt || {}, S.open.running && i === turns.length - 1));
  setText($('chat-title'), S.open.title || 'Untitled chat');
  conv.replaceChildren(...S.open.turns.map(drawTurn));
  setRunning(S.open.running);
  for (const a of (S.approvals.get(String(S.open.id)) || new Map()).values()) drawApproval(a);
  // Events that came meanwhile: a running snapshot already holds its turn and the text so far.
  let allowText = false;
  for (const ev of waiting) {
    if (ev.type === 'turn') { if (S.open.running) continue; allowText = true; }
    if (ev.type !== 'text' || allowText) drawEvent(ev);
  }
  markCurrent(S.open.id);
  markApprovals();
  if (keep != null) conv.scrollTop = keep; else { S.stick = true; stickToBottom(); }
  if (!reload) $('message').focus();
}

// ---------------------------------------------------------------- events
// The event stream, read with fetch (an EventSource cannot send the bearer token): one JSON event per `data:` line.
async function connectEvents() {
  if (S.ended) return;
  const ctrl = new AbortController();
  S.es = ctrl;
  let res = null;
  try {
    res = await fetch('/api/events', { credentials: 'omit', cache: 'no-store', signal: ctrl.signal,
      headers: { Accept: 'text/event-stream', Authorization: 'Bearer ' + S.secret } });
  } catch (e) { /* not answering: try again below */ }
  if (res && res.status === 401) { sessionEnded(); return; }
  if (res && res.ok && res.body) {
    eventsOpened();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
          if (!data) continue;
          try { onEvent(JSON.parse(data)); } catch (e) { console.error(e); }
        }
      }
    } catch (e) { /* the connection broke */ }
  }
  if (S.ended || ctrl.signal.aborted) return;
  eventsLost();
  setTimeout(connectEvents, res ? 1000 : 3000);
}
function eventsOpened() {  // after a reconnect: the state and the open chat again (events may have been missed)
  if (S.onFirstOpen) { S.onFirstOpen(); S.onFirstOpen = null; }
  clearTimeout(S.lostTimer);
  if (!S.lost) return;
  S.lost = false;
  if ($('status').classList.contains('lost')) clearStatus();
  loadState().catch(fail);
  if (S.open && S.open.id != null && !S.loading) openChat(S.open.id, true);
}
function eventsLost() {
  if (!S.lost) S.lostTimer = setTimeout(() => { if (S.lost) showStatus('Lost the connection to toolhost; trying again…', 'lost'); }, 3000);
  S.lost = true;
}
function onEvent(ev) {
  if (!isObj(ev)) return;
  if (ev.type === 'chats') { scheduleListRefresh(); return; }
  const chat = ev.chat, o = S.open;
  if (chat == null) { if (ev.type === 'note') showStatus(ev.text, 'note'); return; }
  // A chat made by our POST to /api/chats/new: its first event carries our nonce.
  if (ev.type === 'turn' && o && o.id == null && o.nonce && ev.nonce === o.nonce) adoptId(chat);
  if (ev.type === 'turn') markRunning(chat, true);
  if (ev.type === 'approval') { addApproval(chat, ev.approval); return; }
  if (ev.type === 'approval-done') { removeApproval(ev.id); return; }
  if (ev.type === 'done') {
    markRunning(chat, false);
    for (const id of [...(S.approvals.get(String(chat)) || new Map()).keys()]) removeApproval(id);
  }
  if (S.loading && same(S.loading.id, chat)) S.loading.events.push(ev);
  else if (S.open && same(S.open.id, chat)) drawEvent(ev);
}
// An event of the open chat, drawn live.
function drawEvent(ev) {
  const o = S.open;
  let t = o.turns[o.turns.length - 1];
  if (ev.type === 'turn') {
    if (t && t.pending) t.pending = false;  // the turn this page sent
    else {
      o.turns.push(t = newTurn(ev.prompt, ev.tool, true));
      const hint = $('conversation').querySelector('.hint');
      if (hint) hint.remove();
      $('conversation').appendChild(drawTurn(t));
    }
    setRunning(true);
  } else if (ev.type === 'round' && t && t.running) {
    const i = Math.max(0, (Number(ev.round) || 1) - 1);
    if (i > t.cur) { flushText(t); t.cur = i; }
    ensureRound(t);
    drawGraph(t);
  } else if (ev.type === 'text' && t && t.running && typeof ev.text === 'string') appendText(t, ev.text);
  else if (ev.type === 'call' && t && isObj(ev.call)) addCall(t, ev.call);
  else if (ev.type === 'result' && isObj(ev.call)) updateCall(ev.call);
  else if (ev.type === 'done') {
    if (t && t.running) finishTurn(t, ev);
    setRunning(false);
  } else if (ev.type === 'note') showStatus(ev.text, 'note');
  else return;
  stickToBottom();
}
function addCall(t, call) {
  if (S.open.calls.has(String(call.id))) { updateCall(call); return; }
  if (t.buffer) flushText(t);
  ensureRound(t).calls.push(call);
  t.el.calls.appendChild(indexCall(t, call));
  drawGraph(t);
}
function updateCall(call) {
  const entry = S.open.calls.get(String(call.id)), last = S.open.turns[S.open.turns.length - 1];
  if (!entry) { if (last) addCall(last, call); return; }
  Object.assign(entry.call, call);
  const old = entry.turn.el.sections.get(String(call.id)), sec = callSection(entry.call);
  entry.turn.el.sections.set(String(call.id), sec);
  if (old) old.replaceWith(sec); else entry.turn.el.calls.appendChild(sec);
  drawGraph(entry.turn);
}
// The turn ended: `response` replaces the streamed text; an error or "Stopped." below it.
function finishTurn(t, ev) {
  t.running = false;
  t.response = typeof ev.response === 'string' ? ev.response : null;
  setAnswer(t, t.response != null ? t.response : t.buffer, false);
  t.buffer = '';
  t.error = ev.stopped ? 'Stopped.' : ev.error ? String(ev.error) : null;
  if (t.error) addError(t, t.error);
  drawGraph(t);
}
function adoptId(id) {
  S.open.id = id;
  if (S.loading) return;  // the user is opening another chat meanwhile
  if (location.hash !== '#chat=' + id) location.hash = 'chat=' + id;
  markCurrent(id);
}
// Keep the newest content in view while the reader is at the bottom (one scroll per frame).
let stickFrame = 0;
function stickToBottom() {
  if (S.stick && !stickFrame) stickFrame = requestAnimationFrame(() => { stickFrame = 0; $('conversation').scrollTop = 1e9; });
}

// ---------------------------------------------------------------- approvals
function addApproval(chat, a) {
  if (!isObj(a) || a.id == null) return;
  if (!S.approvals.has(String(chat))) S.approvals.set(String(chat), new Map());
  S.approvals.get(String(chat)).set(String(a.id), a);
  if (S.open && same(S.open.id, chat) && !(S.loading && same(S.loading.id, chat))) drawApproval(a);
  markApprovals();
}
// Every argument by name, each value shortened on its own by the server (so a padded one hides no other), and
// "Show all" for them whole.
function approvalArguments(a) {
  const shown = Array.isArray(a.shown) ? a.shown.filter(isObj) : [];
  if (!shown.length) return el('p', { class: 'approval-args' }, 'No arguments.');
  const more = shown.some((x) => Number(x.more) > 0 || x.whole !== x.shown);
  return el('div', { class: 'approval-args' },
    el('dl', { class: 'args-short' }, shown.flatMap((x) => [el('dt', null, String(x.name)),
      el('dd', null, el('code', null, String(x.shown)),
        Number(x.more) > 0 ? el('span', { class: 'args-more' }, '… (' + Number(x.more) + ' more characters)') : null)])),
    more && el('button', { type: 'button', class: 'args-toggle', 'aria-expanded': 'false' }, 'Show all'),
    more && el('dl', { class: 'args-whole', hidden: true }, shown.flatMap((x) => [el('dt', null, String(x.name)),
      el('dd', null, el('pre', null, String(x.whole)))])));
}
function approvalBox(a) {
  const button = (cls, answer, label) => el('button', { type: 'button', class: cls, 'data-answer': answer }, label);
  return el('div', { class: 'approval', 'data-approval-id': a.id, role: 'group', 'aria-label': 'Approval needed' },
    el('p', { class: 'approval-question' }, 'Allow ', el('code', { class: 'call-tool' }, a.tool), ' to run?'),
    approvalArguments(a),
    a.reason && el('p', { class: 'approval-reason' }, a.reason),
    a.origin && el('p', { class: 'approval-origin' }, 'From: ', a.origin),
    a.reach && el('p', { class: 'approval-origin approval-reach' }, 'Reaches: ', a.reach),
    el('div', { class: 'approval-buttons' }, button('allow-once', 'once', 'Allow once'), ' ',
      button('allow-always', 'always', 'Always allow'), ' ', button('deny', 'deny', 'Deny')));
}
function findApproval(id) {
  return [...$('conversation').querySelectorAll('.approval')].find((b) => b.dataset.approvalId === clean(String(id)));
}
// A call waits for the user while its approval is open: its status says so, not "running".
function markCallWaiting(id, on) {
  const entry = id != null && S.open ? S.open.calls.get(String(id)) : null;
  if (!entry) return;
  const st = statusOf(entry.call);
  if (on ? st === 'running' : st === 'waiting') updateCall({ id: entry.call.id, status: on ? 'waiting' : 'running' });
}
function drawApproval(a) {
  markCallWaiting(a.call, true);
  if (findApproval(a.id)) return;
  const t = S.open.turns[S.open.turns.length - 1], box = approvalBox(a);
  if (t) t.el.art.insertBefore(box, t.el.answer); else $('conversation').appendChild(box);
  stickToBottom();
}
function removeApproval(id) {
  for (const [chat, waiting] of S.approvals) {
    const a = waiting.get(String(id));
    if (a && S.open && same(S.open.id, chat)) markCallWaiting(a.call, false);
    if (waiting.delete(String(id)) && !waiting.size) S.approvals.delete(chat);
  }
  const box = findApproval(id), focused = box && box.contains(document.activeElement);
  if (box) box.remove();
  if (focused) $('message').focus();
  markApprovals();
}
async function answerApproval(box, answer) {
  const id = box.dataset.approvalId, buttons = box.querySelectorAll('button');
  buttons.forEach((b) => { b.disabled = true; });
  try {
    await api('POST', '/api/approvals/' + enc(id), { answer });
    removeApproval(id);
  } catch (e) {
    if (e.status === 404) removeApproval(id);  // no longer waiting
    else { fail(e); buttons.forEach((b) => { b.disabled = false; }); }
  }
}

// ---------------------------------------------------------------- chat list
function chatItem(c, clock) {
  const li = el('li', { class: c.running ? 'chat running' : 'chat', 'data-id': c.id },
    el('button', { type: 'button', class: 'chat-open' }, el('span', { class: 'chat-title' }, c.title || 'Untitled chat'),
      el('time', { class: 'chat-when', datetime: c.updated }, relTime(c.updated, clock))),
    el('button', { type: 'button', class: 'rename', 'aria-label': 'Rename', title: 'Rename' }, '✎'),
    el('button', { type: 'button', class: 'delete', 'aria-label': 'Delete', title: 'Delete' }, '✕'));
  S.sumOf.set(li, c);
  return li;
}
// The whole list in one go (up to 1000 items): one fragment, no layout reads.
function renderList() {
  const clock = makeClock(), frag = document.createDocumentFragment();
  S.liById = new Map();
  for (const c of S.chats) {
    if (!isObj(c) || c.id == null) continue;
    const li = chatItem(c, clock);
    S.liById.set(String(c.id), li);
    frag.appendChild(li);
  }
  $('chats').replaceChildren(frag);
  $('chats-more').hidden = !S.more;
  markCurrent(S.loading ? S.loading.id : S.open && S.open.id);
  markApprovals();
  const li = S.open && !S.loading && S.liById.get(String(S.open.id));
  if (li) setText($('chat-title'), S.sumOf.get(li).title || 'Untitled chat');
}
function markCurrent(id) {
  const li = id != null && S.liById.get(String(id));
  for (const c of $('chats').querySelectorAll('li.current')) { c.classList.remove('current'); c.firstElementChild.removeAttribute('aria-current'); }
  if (li) { li.classList.add('current'); li.firstElementChild.setAttribute('aria-current', 'page'); }
}
function markRunning(id, on) {
  const li = id != null && S.liById.get(String(id));
  if (li) { li.classList.toggle('running', on); S.sumOf.get(li).running = on; }
}
function markApprovals() {  // chats, other than the open one, with a call waiting for the user
  for (const li of $('chats').querySelectorAll('li.needs-approval')) li.classList.remove('needs-approval');
  for (const chat of S.approvals.keys()) {
    const li = S.liById.get(chat);
    if (li && !(S.open && same(S.open.id, chat))) li.classList.add('needs-approval');
  }
}
async function refreshList() {
  if (S.edit) { S.listDirty = true; return; }  // not under a rename or a delete confirmation
  S.listDirty = false;
  const seq = ++S.listSeq, q = $('chat-search').value.trim();
  try {
    const r = await api('GET', q ? '/api/chats?q=' + enc(q) : '/api/chats');
    if (seq !== S.listSeq) return;
    if (S.edit) { S.listDirty = true; return; }
    S.chats = r && Array.isArray(r.chats) ? r.chats : [];
    S.more = !!(r && r.more);
    renderList();
  } catch (e) { fail(e); }
}
function scheduleListRefresh() { clearTimeout(S.listTimer); S.listTimer = setTimeout(refreshList, 100); }
// A rename or delete confirmation: `node` stands in for `replaced` until it is used; Esc or leaving it cancels.
function beginEdit(li, node, replaced) {
  endEdit();
  replaced.hidden = true;
  li.insertBefore(node, replaced);
  S.edit = { node, restore: () => { node.remove(); replaced.hidden = false; } };
  node.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); endEdit(node); replaced.focus(); }
  });
  node.addEventListener('blur', () => endEdit(node));
  node.focus();
}
function endEdit(node) {
  const edit = S.edit;
  if (!edit || (node && edit.node !== node)) return;
  S.edit = null;
  edit.restore();
  if (S.listDirty) scheduleListRefresh();
}
// Rename: the title becomes an input; Enter saves.
function startRename(li) {
  const input = el('input', { type: 'text', class: 'rename-input', 'aria-label': 'New title', maxlength: '200' });
  input.value = clean(S.sumOf.get(li).title || '');
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); saveRename(li, input); } });
  beginEdit(li, input, li.querySelector('.chat-open'));
  input.select();
}
async function saveRename(li, input) {
  const sum = S.sumOf.get(li), title = input.value.trim();
  endEdit(input);
  li.querySelector('.chat-open').focus();
  if (!title || title === sum.title) return;
  try {
    const updated = await api('PATCH', '/api/chats/' + enc(sum.id), { title });
    sum.title = updated && typeof updated.title === 'string' ? updated.title : title;
    setText(li.querySelector('.chat-title'), sum.title || 'Untitled chat');
    if (S.open && same(S.open.id, sum.id)) setText($('chat-title'), sum.title || 'Untitled chat');
  } catch (e) { fail(e); }
}
// Delete: the button becomes "Delete?"; a second click deletes.
function startDelete(li) {
  const confirm = el('button', { type: 'button', class: 'confirm-delete' }, 'Delete?');
  confirm.addEventListener('mousedown', (e) => e.preventDefault());  // clicking it must not blur (cancel) it first
  beginEdit(li, confirm, li.querySelector('button.delete'));
}
async function confirmDelete(li) {
  const sum = S.sumOf.get(li);
  endEdit();
  try { await api('DELETE', '/api/chats/' + enc(sum.id)); } catch (e) { fail(e); return; }
  const next = li.nextElementSibling || li.previousElementSibling;
  li.remove();
  S.liById.delete(String(sum.id));
  S.chats = S.chats.filter((c) => c !== sum);
  for (const id of [...(S.approvals.get(String(sum.id)) || new Map()).keys()]) removeApproval(id);
  if (S.open && same(S.open.id, sum.id)) showNewChat(true);
  else (next ? next.querySelector('.chat-open') : $('new-chat')).focus();
}

// ---------------------------------------------------------------- tool picker
// inline: opened by "@word" in the message (the keys stay there); at: where that "@" is.
const picker = { open: false, inline: false, at: -1, dismissed: -1, items: [], active: 0 };
function showPicker(open, inline) {
  Object.assign(picker, { open, inline: open && inline });
  $('tool-picker').hidden = !open;
  $('tool-button').setAttribute('aria-expanded', open ? 'true' : 'false');
}
function openPicker(inline, filter) {
  showPicker(true, inline);
  $('tool-filter').value = filter;
  filterTools(filter);
  if (!inline) $('tool-filter').focus();
}
function closePicker(focusMessage) {
  if (picker.open) showPicker(false);
  if (focusMessage) $('message').focus();
}
// By name, title or description, case-insensitive; names that start with (then hold) the filter first.
function filterTools(filter) {
  const q = filter.trim().toLowerCase();
  const hit = (t) => !q || [t.name, t.title, t.description].some((s) => typeof s === 'string' && s.toLowerCase().includes(q));
  const rank = (t) => { const n = t.name.toLowerCase(); return !q ? 0 : n.startsWith(q) ? 0 : n.includes(q) ? 1 : 2; };
  picker.items = S.tools.filter(hit).sort((a, b) => rank(a) - rank(b));
  picker.active = 0;
  const options = picker.items.map((t, i) => el('li', { class: 'tool-option', role: 'option', id: 'tool-option-' + i,
    'data-tool': t.name, 'aria-selected': 'false' }, el('code', null, t.name), ' ',
    el('span', { class: 'tool-desc' }, cut(String(t.description || t.title || ''), 120))));
  if (!options.length) {
    options.push(el('li', { class: 'tool-none', role: 'option', 'aria-disabled': 'true' },
      S.tools.length ? 'No tool matches' : 'No tools are available'));
  }
  $('tool-list').replaceChildren(...options);
  markActive(false);
}
function markActive(scroll) {
  const options = $('tool-list').querySelectorAll('.tool-option'), active = options[picker.active];
  options.forEach((li, i) => li.setAttribute('aria-selected', i === picker.active ? 'true' : 'false'));
  if (active) $('tool-filter').setAttribute('aria-activedescendant', active.id);
  else $('tool-filter').removeAttribute('aria-activedescendant');
  if (active && scroll) active.scrollIntoView({ block: 'nearest' });
}
// Keys while the picker is open (in the filter, or in the message after "@"); true when handled.
function pickerKey(e) {
  if (!picker.open || e.isComposing) return false;
  const n = picker.items.length;
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    if (n) { picker.active = (picker.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n; markActive(true); }
  } else if (e.key === 'Enter' || (e.key === 'Tab' && picker.inline && n)) {
    if (n) pickTool(picker.items[picker.active].name);
    else if (picker.inline) { closePicker(false); return false; }  // nothing to pick: Enter sends
  } else if (e.key === 'Escape') {
    if (picker.inline) picker.dismissed = picker.at;  // not again for this "@"
    closePicker(true);
  } else return false;
  e.preventDefault();
  e.stopPropagation();
  return true;
}
function pickTool(name) {
  if (picker.inline) {  // take the "@word" out of the message
    const m = $('message'), v = m.value, before = v.slice(0, picker.at);
    let end = picker.at + 1;
    while (end < v.length && !/\s/.test(v[end])) end++;
    let after = v.slice(end);
    if ((before === '' || /\s$/.test(before)) && /^\s/.test(after)) after = after.slice(1);
    m.value = before + after;
    m.setSelectionRange(before.length, before.length);
  }
  S.picked = name;
  drawChip();
  closePicker(true);
}
function drawChip() {
  $('picked-tool').hidden = !S.picked;
  $('picked-tool').replaceChildren(...(S.picked ? [el('span', { class: 'picked-name' }, '@' + S.picked),
    el('button', { type: 'button', class: 'unpick', 'aria-label': 'Remove tool' }, '×')] : []));
}
// "@" at the start of the message or after a space opens the picker, filtered by what follows it.
function onMessageInput() {
  const m = $('message'), upto = m.value.slice(0, m.selectionStart), match = /(^|\s)@([^\s@]*)$/.exec(upto);
  if (!match) {
    picker.dismissed = -1;
    if (picker.open && picker.inline) closePicker(false);
    return;
  }
  const at = upto.length - match[2].length - 1;
  if (at === picker.dismissed || (picker.open && !picker.inline)) return;
  picker.at = at;
  if (!picker.open) openPicker(true, match[2]);
  else { $('tool-filter').value = match[2]; filterTools(match[2]); }
}

// ---------------------------------------------------------------- sending and stopping
function makeNonce() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (x) => x.toString(16).padStart(2, '0')).join('');
}
async function send() {
  const m = $('message'), text = m.value.trim(), tool = S.picked;
  if (!text || S.loading) return;
  if (S.open && S.open.running) { showStatus('This chat is still answering: wait for it, or stop it (Esc).', 'note'); return; }
  closePicker(false);
  if (!S.open) {  // a new chat: the server echoes the nonce in its first event
    S.open = { id: null, nonce: makeNonce(), title: '', running: false, turns: [], calls: new Map() };
    $('conversation').replaceChildren();
  }
  const o = S.open, t = Object.assign(newTurn(text, tool, true), { pending: true });  // its `turn` event adopts it
  o.turns.push(t);
  $('conversation').appendChild(drawTurn(t));
  m.value = '';
  S.picked = null;
  drawChip();
  setRunning(true);
  S.stick = true;
  stickToBottom();
  const body = o.id == null ? { text, tool: tool || null, nonce: o.nonce } : { text, tool: tool || null };
  try {
    const r = await api('POST', '/api/chats/' + (o.id == null ? 'new' : enc(o.id)) + '/messages', body);
    if (S.open === o && o.id == null && r && r.chat != null) adoptId(r.chat);
  } catch (e) {
    fail(e);
    if (S.open !== o || !t.pending) return;
    o.turns.splice(o.turns.indexOf(t), 1);  // take the turn back, give the text back
    t.el.art.remove();
    setRunning(false);
    if (!m.value) { m.value = text; S.picked = tool; drawChip(); }
    if (!o.turns.length && o.id == null) showNewChat(false);
  }
}
async function stop() {
  const o = S.open;
  if (!o || !o.running || o.id == null) return;
  $('stop').disabled = true;
  try { await api('POST', '/api/chats/' + enc(o.id) + '/stop'); } catch (e) { fail(e); }
  $('stop').disabled = false;
}

// ---------------------------------------------------------------- state and start
async function loadState() {
  const st = (await api('GET', '/api/state')) || {};
  S.model = typeof st.model === 'string' ? st.model : '';
  setText($('model-name'), S.model);
  S.tools = Array.isArray(st.tools) ? st.tools.filter((t) => isObj(t) && typeof t.name === 'string') : [];
  S.toolsByName = new Map(S.tools.map((t) => [t.name, t]));
  $('history-off').hidden = st.history !== false;
  if (picker.open) filterTools($('tool-filter').value);
  if ($('chat-search').value.trim()) refreshList();  // keep the search
  else if (S.edit) S.listDirty = true;
  else { S.chats = Array.isArray(st.chats) ? st.chats : []; S.more = !!st.more; renderList(); }
  // For the benchmark (toolhost-bench web): when the page first showed its chat list.
  if (!performance.getEntriesByName('chats-drawn').length) performance.mark('chats-drawn');
}
const sidebarOpen = () => document.body.classList.contains('sidebar-open');
function toggleSidebar(open) {  // narrow windows: the sidebar as an overlay
  document.body.classList.toggle('sidebar-open', open);
  $('toggle-sidebar').setAttribute('aria-expanded', open ? 'true' : 'false');
  if (open) ($('chats').querySelector('li.current .chat-open') || $('new-chat')).focus();
}
function toggleNext(button) {  // Raw, Call graph and Show all: the element right after the button
  const target = button.nextElementSibling;
  target.hidden = !target.hidden;
  button.setAttribute('aria-expanded', target.hidden ? 'false' : 'true');
}
function bind() {
  $('composer').addEventListener('submit', (e) => { e.preventDefault(); send(); });
  $('message').addEventListener('keydown', (e) => {
    if (!pickerKey(e) && e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  $('message').addEventListener('input', onMessageInput);
  $('stop').addEventListener('click', stop);
  $('tool-button').addEventListener('click', () => (picker.open ? closePicker(true) : openPicker(false, '')));
  $('tool-filter').addEventListener('input', () => filterTools($('tool-filter').value));
  $('tool-filter').addEventListener('keydown', pickerKey);
  $('tool-picker').addEventListener('focusout', (e) => {  // Tab out of the picker closes it
    if (e.relatedTarget && !e.relatedTarget.closest('#tool-picker, #tool-button')) closePicker(false);
  });
  $('tool-list').addEventListener('mousedown', (e) => e.preventDefault());  // the focus stays where it is
  $('tool-list').addEventListener('click', (e) => {
    const li = e.target.closest('li.tool-option');
    const i = li ? [...$('tool-list').querySelectorAll('.tool-option')].indexOf(li) : -1;
    if (i >= 0 && picker.items[i]) pickTool(picker.items[i].name);
  });
  $('picked-tool').addEventListener('click', (e) => {
    if (e.target.closest('.unpick')) { S.picked = null; drawChip(); $('message').focus(); }
  });
  $('status').addEventListener('click', (e) => { if (e.target.closest('.status-close')) clearStatus(); });
  $('new-chat').addEventListener('click', () => { toggleSidebar(false); showNewChat(true); });
  $('toggle-sidebar').addEventListener('click', () => toggleSidebar(!sidebarOpen()));
  $('chat-search').addEventListener('input', () => { clearTimeout(S.searchTimer); S.searchTimer = setTimeout(refreshList, 150); });
  $('chats').addEventListener('click', (e) => {
    const button = e.target.closest('button'), li = button && button.closest('li.chat');
    if (!li || !S.sumOf.has(li)) return;
    const id = S.sumOf.get(li).id, is = (cls) => button.classList.contains(cls);
    if (is('chat-open')) {
      toggleSidebar(false);
      if (S.open && same(S.open.id, id) && !S.loading) $('message').focus(); else openChat(id);
    } else if (is('rename')) startRename(li);
    else if (is('delete')) startDelete(li);
    else if (is('confirm-delete')) confirmDelete(li);
  });
  $('conversation').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (b && (b.classList.contains('raw-toggle') || b.classList.contains('graph-toggle') || b.classList.contains('args-toggle'))) toggleNext(b);
    else if (b && b.dataset.answer && b.closest('.approval')) answerApproval(b.closest('.approval'), b.dataset.answer);
  });
  $('conversation').addEventListener('scroll', () => {
    const c = $('conversation');
    S.stick = c.scrollHeight - c.scrollTop - c.clientHeight < 60;
  }, { passive: true });
  // Esc closes the picker or the sidebar first, else stops the running answer.
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || e.defaultPrevented || !(e.target instanceof Element)) return;
    if (picker.open) closePicker(true);
    else if (sidebarOpen()) { toggleSidebar(false); $('toggle-sidebar').focus(); }
    else if (S.open && S.open.running && !e.target.closest('#sidebar')) stop();
    else return;
    e.preventDefault();
  });
  // A press outside closes the picker and the sidebar overlay.
  document.addEventListener('pointerdown', (e) => {
    if (!(e.target instanceof Element)) return;
    if (picker.open && !e.target.closest('#tool-picker, #tool-button')) closePicker(false);
    if (sidebarOpen() && !e.target.closest('#sidebar, #toggle-sidebar')) toggleSidebar(false);
  });
  window.addEventListener('hashchange', syncFromHash);
  window.addEventListener('popstate', syncFromHash);
  setInterval(() => {  // relative times age: refresh their text each minute
    const clock = makeClock();
    for (const t of $('chats').getElementsByTagName('time')) t.textContent = relTime(t.getAttribute('datetime'), clock);
  }, 60000);
}
async function start() {
  bind();
  if (!(await enter())) { markReady(); return; }
  // The event stream first: the server follows this page from then on, so nothing that happens while the state and
  // the chat load is missed (a snapshot and the events after it overlap at worst). Waits at most 3 s for it.
  await new Promise((resolve) => { S.onFirstOpen = resolve; connectEvents(); setTimeout(resolve, 3000); });
  S.onFirstOpen = null;
  const id = hashId();
  if (id != null) openChat(id); else showNewChat(false);
  try { await loadState(); } catch (e) { fail(e); }
  markReady();
}

start();
