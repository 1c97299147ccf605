import { randomBytes } from 'node:crypto';
import { AppError } from '@outreach/platform';
import type { Context } from 'koa';
import type { CampaignDeps } from '../deps';
import { dash } from './context';
import { html, type SafeHtml } from './html';
import { hashSessionId } from './sessions.service';

/** The hidden field of a form that must act once: a token of 128 random bits, new on every page. */
export function onceField(): SafeHtml {
  return html`<input type="hidden" name="_once" value="${randomBytes(16).toString('base64url')}">`;
}

/** The query parameter a repeated submission's answer adds, so that its page can say so. */
export const RESENT = 'resent';

/** How long a repeated submission waits for the first one to finish before it gives up. */
export const ONCE_WAIT_MS = 20_000;

/** `location` with `resent=1` added to its query (before any fragment). */
export function resentLocation(location: string): string {
  const hash = location.indexOf('#');
  const path = hash < 0 ? location : location.slice(0, hash);
  const fragment = hash < 0 ? '' : location.slice(hash);
  return `${path}${path.includes('?') ? '&' : '?'}${RESENT}=1${fragment}`;
}

/**
 * Runs a form's action at most once per token (the `_once` field, see `onceField`). `act` does
 * the work and returns where its page is (303), or returns nothing when it did nothing (a refusal
 * rendered as a page), which frees the token. The same token sent again, by the same session, is
 * answered with a 303 to the first submission's page plus `resent=1`, after waiting for the first
 * one to finish when it is still running. A form without a token (a page from before this field)
 * is acted on as it comes.
 */
export async function actOnce(
  domain: Pick<CampaignDeps, 'pool' | 'clock'>,
  ctx: Context,
  act: () => Promise<string | undefined>,
): Promise<void> {
  const state = dash(ctx);
  const token = state.form?.get('_once') ?? '';
  if (!state.sessionId || !/^[\w-]{16,64}$/.test(token)) {
    const location = await act();
    if (location !== undefined) {
      ctx.status = 303;
      ctx.redirect(location);
    }
    return;
  }
  const session = hashSessionId(state.sessionId);
  const until = Date.now() + ONCE_WAIT_MS;
  for (;;) {
    const claimed = await domain.pool.query(
      `INSERT INTO operator_form_submissions (session_hash, token, created_at) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING`,
      [session, token, domain.clock()],
    );
    if (claimed.rowCount === 1) break;
    // Sent before: answer with where the first submission led, once it has finished.
    const { rows } = await domain.pool.query<{ location: string | null }>(
      'SELECT location FROM operator_form_submissions WHERE session_hash = $1 AND token = $2',
      [session, token],
    );
    const location = rows[0]?.location;
    if (location) {
      ctx.status = 303;
      ctx.redirect(resentLocation(location));
      return;
    }
    // Gone: the first submission was refused and freed the token; this one is tried afresh.
    if (rows.length === 0) continue;
    if (Date.now() >= until) {
      throw new AppError('conflict', 'This form is still being sent from another click or tab.', {
        hint: 'Wait a moment, then open the page again to see whether it was done.',
        details: { reason: 'form_in_progress' },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  let location: string | undefined;
  try {
    location = await act();
  } finally {
    if (location === undefined) {
      await domain.pool.query(
        'DELETE FROM operator_form_submissions WHERE session_hash = $1 AND token = $2',
        [session, token],
      );
    }
  }
  if (location === undefined) return;
  await domain.pool.query(
    'UPDATE operator_form_submissions SET location = $3 WHERE session_hash = $1 AND token = $2',
    [session, token, location],
  );
  ctx.status = 303;
  ctx.redirect(location);
}
