import { distinctBatches, readUsageStarts, type UsageStartsBatch } from './events';

describe('readUsageStarts', () => {
  const recipient = { recipientId: 'rcp_1', campaignId: 'cmp_1', projectId: 'prj_1', startedAtMs: [1, 2] };
  const good: UsageStartsBatch = { batchId: 'usb_1', recipients: [recipient] };

  it('reads every well-formed batch of an event', () => {
    const other = { batchId: 'usb_2', recipients: [{ ...recipient, recipientId: 'rcp_2' }] };
    expect(readUsageStarts({ eventId: 'usb_e', batches: [good, other] })).toEqual([good, other]);
  });

  it('leaves out a batch with anything malformed in it whole, and keeps the others', () => {
    const bad = [
      { batchId: 'usb_b', recipients: [recipient, { ...recipient, startedAtMs: [1.5] }] },
      { batchId: 'usb_b', recipients: [{ ...recipient, startedAtMs: [] }] },
      { batchId: 'usb_b', recipients: [{ ...recipient, startedAtMs: [-1] }] },
      { batchId: 'usb_b', recipients: [{ ...recipient, startedAtMs: '1' }] },
      { batchId: 'usb_b', recipients: [{ ...recipient, recipientId: 'rcp\0' }] },
      { batchId: 'usb_b', recipients: [{ ...recipient, projectId: undefined }] },
      { batchId: '', recipients: [recipient] },
      { batchId: 'usb_b' },
      null,
    ];
    for (const batch of bad)
      expect(readUsageStarts({ eventId: 'e', batches: [batch, good] })).toEqual([good]);
  });

  it('is undefined when nothing can be applied, so the event counts as malformed', () => {
    expect(readUsageStarts({ eventId: 'e', batches: [] })).toBeUndefined();
    expect(readUsageStarts({ eventId: 'e', batches: [{ batchId: 'usb_b' }] })).toBeUndefined();
    expect(readUsageStarts({ batchId: 'usb_1', conversations: [] })).toBeUndefined();
    expect(readUsageStarts(null)).toBeUndefined();
  });
});

describe('distinctBatches', () => {
  it('keeps each batch once, the first occurrence, in order', () => {
    const batch = (batchId: string, recipientId: string) => ({
      batchId,
      recipients: [{ recipientId, campaignId: 'c', projectId: 'p', startedAtMs: [1] }],
    });
    const [a, b, c] = [batch('usb_a', 'r1'), batch('usb_b', 'r2'), batch('usb_c', 'r3')];
    expect(distinctBatches([a, b, a, c, b])).toEqual([a, b, c]);
    expect(distinctBatches([])).toEqual([]);
  });
});
