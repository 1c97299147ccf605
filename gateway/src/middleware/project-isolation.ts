import { AppError, tagSpan } from '@outreach/platform';
import type { Middleware } from 'koa';
import type { Grant } from '../grant-cache';

/**
 * A key reaches only its own project. Another project id in the path is refused the same
 * way whether or not that project exists, so keys cannot probe for projects.
 */
export const projectIsolation: Middleware = async (ctx, next) => {
  const grant = ctx.state.grant as Grant;
  if (ctx.params?.projectId !== grant.projectId) {
    throw new AppError('forbidden', 'This API key belongs to another project.', {
      details: { reason: 'project_mismatch' },
    });
  }
  tagSpan({ projectId: grant.projectId, recipientId: ctx.params.recipientId });
  await next();
};
