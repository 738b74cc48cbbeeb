// DOM helpers. Every value from the server becomes a text node (textContent), never markup: there is
// no innerHTML anywhere in the console, and the CSP's require-trusted-types-for would refuse one.

const ATTRS = new Set(['class', 'id', 'type', 'name', 'value', 'placeholder', 'for', 'title', 'min', 'max',
  'maxlength', 'rows', 'colspan', 'role', 'aria-label', 'autocomplete', 'required', 'disabled', 'selected',
  'checked', 'open']);

/** h('tag', {attrs, on: {click: fn}}, ...children): strings and numbers become text nodes. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'on') {
      for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    } else if (k === 'href') {
      el.setAttribute('href', safeHref(v));
    } else if (k.startsWith('data-')) {
      el.setAttribute(k, String(v));
    } else if (ATTRS.has(k)) {
      el.setAttribute(k, v === true ? '' : String(v));
    } else {
      throw new Error('attribute not allowed: ' + k);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Only the console's own routes (#/...) are links; anything else becomes a dead link. */
function safeHref(v) {
  const s = String(v);
  return s.startsWith('#/') ? s : '#/';
}

/** A link to an order, or the plain number when it is not an identifier. */
export function orderLink(orderNo) {
  if (orderNo === null || orderNo === undefined) return '—';
  return /^[A-Za-z0-9._:-]{1,64}$/.test(orderNo)
    ? h('a', { href: '#/order/' + encodeURIComponent(orderNo), 'data-testid': 'order-link' }, orderNo)
    : h('span', {}, orderNo);
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function money(cents) {
  if (cents === null || cents === undefined) return '—';
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return sign + Math.floor(abs / 100) + '.' + String(abs % 100).padStart(2, '0');
}

// ---- time: local or UTC, one switch for the whole console ---------------------------------------

let utc = localStorage.getItem('og.utc') === '1';

export function timeZoneIsUtc() {
  return utc;
}

export function setUtc(v) {
  utc = v;
  localStorage.setItem('og.utc', v ? '1' : '0');
}

export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (isNaN(d.getTime())) return String(iso);
  if (utc) return d.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A table: columns [{title, cell: row => node|string}], with a row per item. */
export function table(columns, rows, attrs = {}) {
  return h('table', attrs,
    h('thead', {}, h('tr', {}, columns.map(c => h('th', {}, c.title)))),
    h('tbody', {}, rows.length === 0
      ? h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, 'nothing here'))
      : rows.map(r => h('tr', { 'data-testid': 'row' }, columns.map(c => h('td', {}, c.cell(r)))))));
}

/** Pretty JSON (or raw text) in a <pre>, as text. */
export function pre(value, attrs = {}) {
  let text = value;
  if (typeof value !== 'string') text = JSON.stringify(value, null, 2);
  else {
    try { text = JSON.stringify(JSON.parse(value), null, 2); } catch (e) { /* not JSON: shown as it is */ }
  }
  return h('pre', attrs, text);
}

export function badge(text, kind) {
  return h('span', { class: 'badge ' + (kind || String(text).toLowerCase().replace(/_/g, '-')) }, text);
}

/** A message line for an operation's result or an error. */
export function notice(el, text, ok) {
  clear(el);
  el.className = 'notice ' + (ok ? 'ok' : 'error');
  el.textContent = text;
}

/** An outbox event's logged attempts (each try: when, relay, outcome, error), Stripe-style. */
export function attemptLog(log) {
  if (!log || log.length === 0) return h('span', { class: 'hint' }, 'no failed attempt logged');
  return h('ol', { class: 'attempts', 'data-testid': 'attempt-log' }, log.map(a =>
    h('li', {}, '#', a.attempt, ' ', time(a.at), ' ', badge(a.outcome), ' ', a.relay || '', a.error ? [' · ', a.error] : null)));
}
