import { createMetrics, type ServiceMetrics } from '@outreach/platform';
import { Counter } from 'prom-client';

/** The service metrics plus the link runtime's own counters. */
export interface LinkMetrics extends ServiceMetrics {
  admissions: Counter;
  refusals: Counter<'code'>;
}

/** Creates the link runtime's metrics on a registry of its own. */
export function createLinkMetrics(): LinkMetrics {
  const base = createMetrics('link-runtime');
  return {
    ...base,
    admissions: new Counter({
      name: 'link_conversations_admitted_total',
      help: 'Conversations admitted on links',
      registers: [base.registry],
    }),
    refusals: new Counter({
      name: 'link_refusals_total',
      help: 'Link page views, starts and messages refused, by error code',
      labelNames: ['code'],
      registers: [base.registry],
    }),
  };
}
