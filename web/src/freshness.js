import { html } from './html.js';
import { utc, utcClock } from './format.js';

/** When the figures were read, and whether the server answers now. */
export function Freshness({ poll }) {
  if (poll.error !== null) {
    const reason = poll.error.code === 'UNREACHABLE' ? 'The server is unreachable' : `Reading failed: ${poll.error.message}`;
    return html`<p class="freshness failing" role="alert">
      ${reason} (since ${utc(poll.failingSinceMs)}).
      ${poll.readAtMs === null ? ' Nothing has been read yet.' : ` Showing what was read at ${utc(poll.readAtMs)}.`} Retrying every few seconds.
    </p>`;
  }
  if (poll.readAtMs === null) return html`<p class="freshness" role="status">Reading…</p>`;
  return html`<p class="freshness" role="status" aria-live="off">Read at <time datetime=${new Date(poll.readAtMs).toISOString()}>${utcClock(poll.readAtMs)}</time>; refreshes by itself.</p>`;
}
