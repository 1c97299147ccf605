import { createLinkMetrics } from './metrics';

test('the counters the alerts read export every known series at 0 from the start', async () => {
  const text = await createLinkMetrics().registry.metrics();
  const series = (name: string, labels: string) =>
    new RegExp(`^${name}\\{${labels},service="link-runtime"\\} 0$`, 'm');
  // OutreachUsageCountersRestored reads increase() of the restored series: it must exist before
  // the first restore, or the burst after a Redis restart would go unseen.
  expect(text).toMatch(series('link_counter_seeds_total', 'outcome="empty"'));
  expect(text).toMatch(series('link_counter_seeds_total', 'outcome="restored"'));
  expect(text).toMatch(series('link_refusals_total', 'code="unavailable",kind="failure"'));
  expect(text).toMatch(series('link_refusals_total', 'code="internal",kind="failure"'));
});
