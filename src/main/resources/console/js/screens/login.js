import { post } from '../api.js';
import { h, clear, notice } from '../dom.js';

/** The sign-in form; onSignedIn(session) receives {operator, csrfToken, ...}. */
export function renderLogin(app, onSignedIn) {
  const name = h('input', { id: 'login-name', name: 'name', autocomplete: 'username', required: true });
  const password = h('input', { id: 'login-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const msg = h('div', { 'data-testid': 'login-message' });
  const button = h('button', { type: 'submit', 'data-testid': 'login-submit' }, 'Sign in');
  const form = h('form', { class: 'login', on: { submit: async e => {
    e.preventDefault();
    button.disabled = true;
    clear(msg);
    try {
      onSignedIn(await post('/admin/login', { name: name.value, password: password.value }));
    } catch (err) {
      notice(msg, err.status === 429 ? 'Too many failed attempts: ' + err.message
        : err.status === 401 ? 'Wrong name or password.' : err.message, false);
      password.value = '';
      button.disabled = false;
    }
  } } },
  h('h1', {}, 'ordergate console'),
  h('label', { for: 'login-name' }, 'Operator'), name,
  h('label', { for: 'login-password' }, 'Password'), password,
  button, msg);
  clear(app).append(form);
  name.focus();
}
