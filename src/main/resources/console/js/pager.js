// Cursor pagination over an admin list: follows the server's Link rel="next"; "previous" goes back
// through the pages already visited.
import { page } from './api.js';
import { h, clear, notice } from './dom.js';

/** Renders the list from firstUrl into el; render(rows) builds the table. */
export function pager(el, firstUrl, render) {
  const visited = [];
  let current = firstUrl;
  let next = null;
  const body = h('div', { 'data-testid': 'page' });
  const status = h('span', { class: 'page-no', 'data-testid': 'page-no' });
  const prevBtn = h('button', { type: 'button', 'data-testid': 'prev-page', on: { click: () => go(visited.pop(), true) } }, '← newer');
  const nextBtn = h('button', { type: 'button', 'data-testid': 'next-page', on: { click: () => { visited.push(current); go(next, false); } } }, 'older →');
  const msg = h('div', {});
  clear(el).append(body, h('div', { class: 'pager' }, prevBtn, status, nextBtn), msg);

  async function go(url) {
    current = url;
    prevBtn.disabled = true;
    nextBtn.disabled = true;
    try {
      const result = await page(url);
      next = result.next;
      clear(body).append(render(result.rows));
      status.textContent = 'page ' + (visited.length + 1);
      clear(msg);
    } catch (e) {
      notice(msg, e.message, false);
    }
    prevBtn.disabled = visited.length === 0;
    nextBtn.disabled = !next;
  }

  go(firstUrl);
  return { reload: () => go(current) };
}
