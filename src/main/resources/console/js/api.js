// The admin API, with the session cookie (HttpOnly: this code never sees it) and the CSRF token,
// which lives only in this module's memory, never in storage.

let csrf = null;

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || ('HTTP ' + status));
    this.status = status;
    this.code = code;
  }
}

/** Called when a request finds the session gone (401). */
let onSignedOut = () => {};

export function onSessionLost(fn) {
  onSignedOut = fn;
}

export function setCsrf(token) {
  csrf = token;
}

async function request(method, url, body, background) {
  const headers = { 'Accept': 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  if (background) headers['X-Background'] = '1';
  const resp = await fetch(url, {
    method, headers, credentials: 'same-origin', cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  const text = await resp.text();
  if (text) {
    try { data = JSON.parse(text); } catch (e) { data = null; }
  }
  if (!resp.ok) {
    const err = new ApiError(resp.status, data && data.error, data && data.message);
    err.body = data;
    if (resp.status === 401 && !url.endsWith('/admin/login')) onSignedOut(err);
    throw err;
  }
  return { data, link: resp.headers.get('Link') };
}

export async function get(url, opts = {}) {
  return (await request('GET', url, undefined, opts.background)).data;
}

export async function post(url, body) {
  return (await request('POST', url, body === undefined ? {} : body)).data;
}

/** A page of a keyset list: its rows and the URL of the next page (from Link rel="next"), or null. */
export async function page(url) {
  const { data, link } = await request('GET', url);
  const m = link && /<([^>]+)>;\s*rel="next"/.exec(link);
  return { rows: data || [], next: m ? m[1] : null };
}

/** URL with the non-empty filters as its query. */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== null && v !== undefined && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? path + '?' + s : path;
}
