// The operator console: a hash router over the screens, behind the session from the login screen.
import { get, post, setCsrf, onSessionLost } from './api.js';
import { h, clear, timeZoneIsUtc, setUtc } from './dom.js';
import { renderLogin } from './screens/login.js';
import { renderOverview } from './screens/overview.js';
import { renderExceptions, renderException } from './screens/exceptions.js';
import { renderOrder } from './screens/order.js';
import { renderOutbox } from './screens/outbox.js';
import { renderSweeps } from './screens/sweeps.js';
import { renderReconcile } from './screens/reconcile.js';
import { renderAudit } from './screens/audit.js';

const app = document.getElementById('app');
let operator = null;
let cleanup = null;

const NAV = [
  ['overview', 'Overview'], ['exceptions', 'Exceptions'], ['order', 'Order'], ['outbox', 'Outbox'],
  ['sweeps', 'Sweeps'], ['reconcile', 'Reconciliation'], ['audit', 'Audit log'],
];

/** #/screen/rest?query -> { screen, rest, query } */
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, q] = raw.split('?');
  const [screen, ...rest] = path.split('/');
  return { screen: screen || 'overview', rest: rest.map(decodeURIComponent), query: new URLSearchParams(q || '') };
}

function shell() {
  const view = h('main', { id: 'view' });
  const utcBox = h('input', { type: 'checkbox', id: 'utc', 'data-testid': 'utc-toggle', checked: timeZoneIsUtc(),
    on: { change: e => { setUtc(e.target.checked); route(); } } });
  const nav = h('nav', {}, NAV.map(([id, label]) => h('a', { href: '#/' + id, 'data-nav': id }, label)));
  const header = h('header', {},
    h('span', { class: 'brand' }, 'ordergate'), nav,
    h('span', { class: 'who' },
      h('label', { for: 'utc' }, utcBox, ' UTC'),
      h('span', { 'data-testid': 'operator' }, operator),
      h('button', { type: 'button', 'data-testid': 'logout', on: { click: logout } }, 'Sign out')));
  clear(app).append(header, view);
  return view;
}

async function logout() {
  try {
    await post('/admin/logout');
  } finally {
    signedOut();
  }
}

function signedOut() {
  operator = null;
  setCsrf(null);
  if (cleanup) cleanup();
  cleanup = null;
  renderLogin(app, session => { signedIn(session); });
}

function signedIn(session) {
  operator = session.operator;
  setCsrf(session.csrfToken);
  shell();
  route();
}

function route() {
  if (!operator) return;
  if (cleanup) cleanup();
  cleanup = null;
  let view = document.getElementById('view');
  if (!view) view = shell();
  clear(view);
  const { screen, rest, query } = parseHash();
  document.querySelectorAll('nav a').forEach(a => a.classList.toggle('active', a.getAttribute('data-nav') === screen));
  const screens = {
    overview: () => renderOverview(view),
    exceptions: () => rest[0] ? renderException(view, rest[0]) : renderExceptions(view, query),
    order: () => renderOrder(view, rest[0], query),
    outbox: () => renderOutbox(view, query),
    sweeps: () => renderSweeps(view),
    reconcile: () => renderReconcile(view),
    audit: () => renderAudit(view, query),
  };
  const stop = (screens[screen] || screens.overview)();
  cleanup = typeof stop === 'function' ? stop : null;
}

onSessionLost(() => { if (operator) signedOut(); });
window.addEventListener('hashchange', route);

get('/admin/session').then(signedIn, () => signedOut());
