import { randomBytes } from 'node:crypto';
import { AppError } from '@outreach/platform';
import type { Context } from 'koa';
import type { CampaignDeps } from '../deps';
import { safeNext } from './auth.pages';
import { dash } from './context';
import { html, type SafeHtml } from './html';
import { SENT_BEFORE } from './layout';
import { hashSessionId } from './sessions.service';

/** The hidden field of a form that must act once: a token of 128 random bits, new on every page. */
export function onceField(): SafeHtml {
  return html`<input type="hidden" name="_once" value="${randomBytes(16).toString('base64url')}">`;
}

/** The query parameter a repeated submission's answer adds, so that its page can say so. */
export const RESENT = 'resent';

/** How long a repeated submission waits for the first one to finish before it gives up. */
export const ONCE_WAIT_MS = 20_000;

/**
 * A claim still without its page this long after it was made is one whose submission will never
 * record it (its action failed to record where it led, or its process ended): past the wait a
 * repeated submission gives, plus a margin for the first one's last steps.
 */
export const ONCE_STALE_MS = ONCE_WAIT_MS + 10_000;

/** `location` with `name=1` added to its query (before any fragment). */
function withFlag(location: string, name: string): string {
  const hash = location.indexOf('#');
  const path = hash < 0 ? location : location.slice(0, hash);
  const fragment = hash < 0 ? '' : location.slice(hash);
  return `${path}${path.includes('?') ? '&' : '?'}${name}=1${fragment}`;
}

/** `location` with `resent=1` added to its query (before any fragment). */
export function resentLocation(location: string): string {
  return withFlag(location, RESENT);
}

/** The dashboard page a form was sent from: its Referer, when of this origin; else the home page. */
export function formPageOf(ctx: Context): string {
  let from: string | undefined;
  try {
    const referer = new URL(ctx.get('referer'));
    if (referer.host === ctx.host) from = referer.pathname + referer.search;
  } catch {
    // no Referer, or an unparseable one: the dashboard home
  }
  return safeNext(from);
}

/** The answer of a session that ended: the guard's, sign-in with `?ended=1` (see router.ts). */
const sessionEnded = () => new AppError('unauthorized', 'Your session has ended. Sign in again.');

/**
 * Runs a form's action at most once per token (the `_once` field, see `onceField`). `act` does
 * the work and returns where its page is (303), or returns nothing when it did nothing (a refusal
 * rendered as a page), which frees the token. The same token sent again, by the same session, is
 * answered with a 303 to the first submission's page plus `resent=1`, after waiting for the first
 * one to finish when it is still running. A claim that never got its page (the first submission
 * failed to record it, or its process ended) is, once older than ONCE_STALE_MS, answered with a 303
 * to the page the form was sent from plus `sent-before=1`, whose notice says to check the result
 * there: never a wait and a 409 at every resend. A session ended between the guard and the claim
 * (a sign-out or a password change in another tab) is answered as a form sent after its session
 * ended. A form without a token (a page from before this field) is acted on as it comes.
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
    const claimed = await domain.pool
      .query(
        `INSERT INTO operator_form_submissions (session_hash, token, created_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING`,
        [session, token, domain.clock()],
      )
      .catch((err: { code?: string }) => {
        // The session was deleted since the guard found it: nothing was sent within it.
        if (err.code === '23503') throw sessionEnded();
        throw err;
      });
    if (claimed.rowCount === 1) break;
    // Sent before: answer with where the first submission led, once it has finished.
    const { rows } = await domain.pool.query<{ location: string | null; created_at: Date }>(
      'SELECT location, created_at FROM operator_form_submissions WHERE session_hash = $1 AND token = $2',
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
    // Never to be finished: whether it was done is told by the page it was sent from.
    if (domain.clock().getTime() - rows[0].created_at.getTime() > ONCE_STALE_MS) {
      ctx.status = 303;
      ctx.redirect(withFlag(formPageOf(ctx), SENT_BEFORE));
      return;
    }
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
  // Done: its page is shown even when recording it fails (a resend then learns it was sent before).
  await domain.pool
    .query('UPDATE operator_form_submissions SET location = $3 WHERE session_hash = $1 AND token = $2', [
      session,
      token,
      location,
    ])
    .catch((err: unknown) => ctx.state.log?.warn({ err }, 'dashboard form result not recorded'));
  ctx.status = 303;
  ctx.redirect(location);
}
