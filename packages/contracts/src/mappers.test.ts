import type { RecipientMessage } from './index';
import { toAllowance, toCreateResult, toFullRecipient, toListEntry } from './mappers';
import { validator } from './validation';

const recipient: RecipientMessage = {
  id: 'rcp_1',
  campaignId: 'cmp_1',
  projectId: 'prj_a',
  metadata: { plan: 'pro' },
  deviceId: 'dev_1',
  isActive: true,
  link: 'http://localhost:8081/i/tok',
  injectionMode: 'append',
  interactionCount: 0,
  distillationStatus: 'none',
  createdAt: '2026-11-22T10:00:00.000Z',
};

test('unset optional proto fields become null and the shapes match the schemas', () => {
  const entry = toListEntry(recipient);
  expect(entry.externalId).toBeNull();
  expect(entry.lastInteractionAt).toBeNull();
  expect(validator('recipient-list-entry')(entry)).toEqual([]);
  const full = toFullRecipient({ ...recipient, externalId: 'e', windowSeconds: 60 });
  expect(full.externalId).toBe('e');
  expect(full.windowSeconds).toBe(60);
  expect(validator('recipient')(full)).toEqual([]);
});

test('create results carry their index and only their own fields', () => {
  const created = toCreateResult({ status: 'created', index: 0, recipient, id: 'rcp_1' });
  const dup = toCreateResult({
    status: 'duplicate',
    index: 1,
    externalId: 'e',
    id: 'rcp_0',
    recipient: null,
  });
  const err = toCreateResult({
    status: 'error',
    index: 2,
    recipient: null,
    code: 'invalid_request',
    error: 'bad',
    detailsJson: '{"pointer":"/label"}',
  });
  expect(dup).toEqual({ status: 'duplicate', index: 1, externalId: 'e', id: 'rcp_0' });
  expect(err).toEqual({
    status: 'error',
    index: 2,
    code: 'invalid_request',
    error: 'bad',
    details: { pointer: '/label' },
  });
  const body = { created: 1, failed: 2, total: 3, results: [created, dup, err] };
  expect(validator('create-response')(body)).toEqual([]);
});

test('an uncapped allowance reports null included and remaining', () => {
  expect(toAllowance({ used: 4, exhausted: false })).toEqual({
    used: 4,
    included: null,
    remaining: null,
    exhausted: false,
  });
});

test('the full shape is the list entry plus the full fields, in that key order, also in created results', () => {
  const r = { ...recipient, externalId: 'e', label: 'L', injectionInstructions: 'Be brief.' };
  const full = toFullRecipient(r);
  const entryKeys = Object.keys(toListEntry(r));
  expect(Object.keys(full).slice(0, entryKeys.length)).toEqual(entryKeys);
  expect(full).toMatchObject(toListEntry(r));
  expect(full.metadata).toEqual({ plan: 'pro' });
  expect(full.metadata).not.toBe(r.metadata);
  const created = toCreateResult({ status: 'created', index: 4, recipient: r, id: r.id });
  expect(JSON.stringify(created)).toBe(JSON.stringify({ status: 'created', index: 4, ...full }));
});
