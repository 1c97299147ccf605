import { runInNewContext } from 'node:vm';
import { status } from '@grpc/grpc-js';
import { AppError, ERROR_CATALOGUE, toAppError } from './errors';
import { fromItemRefusal, fromServiceError, toItemRefusal, toServiceError } from './grpc';

describe('error catalogue', () => {
  it('gives every code an HTTP status, a gRPC status and a hint', () => {
    for (const [code, spec] of Object.entries(ERROR_CATALOGUE)) {
      expect(code).toMatch(/^[a-z_]+$/);
      expect(spec.httpStatus).toBeGreaterThanOrEqual(400);
      expect(Object.values(status)).toContain(spec.grpcStatus);
      expect(spec.hint.length).toBeGreaterThan(0);
    }
  });

  // A client that follows the hint of a final refusal must not be sent round in circles.
  it('never tells a client to retry or try again later where retrying will not help', () => {
    const contradicting = Object.entries(ERROR_CATALOGUE)
      .filter(([, spec]) => !spec.retryable && /\b(retry|try again|later)\b/i.test(spec.hint))
      .map(([code, spec]) => `${code}: ${spec.hint}`);
    expect(contradicting).toEqual([]);
  });

  it('round-trips an AppError through gRPC with its code, details and hint', () => {
    const original = new AppError('conflict', 'Campaign is not editable.', {
      details: { reason: 'not_editable' },
      hint: 'custom',
    });
    const back = fromServiceError(toServiceError(original));
    expect(back.toBody()).toEqual(original.toBody());
    expect(toServiceError(original).code).toBe(status.FAILED_PRECONDITION);
  });

  it("keeps a refusal's own retryable, in its body and through gRPC, where it differs from its code's", () => {
    const final = new AppError('unavailable', 'Not now.', { retryable: false });
    expect(final.toBody().retryable).toBe(false);
    expect(fromServiceError(toServiceError(final)).toBody()).toEqual(final.toBody());
    const plain = new AppError('unavailable');
    expect(plain.toBody().retryable).toBe(true);
    expect(toServiceError(plain).metadata?.get('x-error-retryable')).toEqual([]);
    expect(fromServiceError(toServiceError(plain)).toBody()).toEqual(plain.toBody());
  });

  it('round-trips an AppError as one item of a batch answer, hint only when it is not the default', () => {
    const custom = new AppError('conflict', 'Campaign is not editable.', {
      details: { reason: 'not_editable' },
      hint: 'custom',
    });
    expect(fromItemRefusal(toItemRefusal(custom)).toBody()).toEqual(custom.toBody());
    const plain = new AppError('not_found', 'Recipient not found.', { details: { id: 'rcp_1' } });
    expect(toItemRefusal(plain)).not.toHaveProperty('hint');
    expect(fromItemRefusal(toItemRefusal(plain)).toBody()).toEqual(plain.toBody());
    const unknown = fromItemRefusal({ code: 'nonsense', error: 'driver said x' }, 'req-2').toBody();
    expect(unknown).toMatchObject({ code: 'internal', details: { requestId: 'req-2' } });
    expect(JSON.stringify(unknown)).not.toContain('driver');
  });

  it('turns transport failures into retryable unavailable and hides unknown errors', () => {
    expect(
      fromServiceError({ code: status.UNAVAILABLE, details: 'connect ECONNREFUSED' }).toBody(),
    ).toMatchObject({
      code: 'unavailable',
      retryable: true,
    });
    const hidden = toAppError(new Error('relation "x" does not exist'), 'req-1').toBody();
    expect(hidden).toMatchObject({ code: 'internal', details: { requestId: 'req-1' } });
    expect(JSON.stringify(hidden)).not.toContain('relation');
  });
});

describe('toAppError on a store out of reach', () => {
  /** An Error with the name and code the client libraries give it. */
  const failure = (message: string, fields: { name?: string; code?: string } = {}) =>
    Object.assign(new Error(message), fields);

  // As node-postgres, ioredis and Node's sockets report them (seen against stopped servers).
  it.each([
    ['a refused connection', failure('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' })],
    ['a reset connection', failure('read ECONNRESET', { code: 'ECONNRESET' })],
    [
      'PostgreSQL terminating the connection',
      failure('terminating connection due to administrator command', { code: '57P01' }),
    ],
    ['PostgreSQL starting up', failure('the database system is starting up', { code: '57P03' })],
    ['a PostgreSQL connection failure', failure('connection failure', { code: '08006' })],
    ['pg losing the connection', failure('Connection terminated unexpectedly')],
    [
      'ioredis giving up while disconnected',
      failure('Reached the max retries per request limit (which is 2).', {
        name: 'MaxRetriesPerRequestError',
      }),
    ],
    // Node's socket errors reach a vm (as jest runs tests) from the main realm: not `instanceof Error` there.
    [
      'a refusal from another realm',
      runInNewContext("Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })"),
    ],
  ])('%s is unavailable and retryable, without its text', (_, err) => {
    const body = toAppError(err, 'req-2').toBody();
    expect(body).toMatchObject({ code: 'unavailable', retryable: true, details: { requestId: 'req-2' } });
    expect(JSON.stringify(body)).not.toContain(err.message);
  });

  it.each([
    ['a SQL error', failure('duplicate key value violates unique constraint', { code: '23505' })],
    ['a serialization failure', failure('could not serialize access', { code: '40001' })],
    ['a Redis script error', failure('ERR Error running script', { name: 'ReplyError' })],
    ['a thrown string', 'boom'],
    ['an object with an unknown code', { code: 'EWHATEVER', message: 'x' }],
  ])('%s stays internal', (_, err) => {
    expect(toAppError(err).code).toBe('internal');
  });

  it.each([
    ['text', failure('invalid byte sequence for encoding "UTF8": 0x00', { code: '22021' })],
    ['jsonb', failure('unsupported Unicode escape sequence', { code: '22P05' })],
  ])('a NUL character PostgreSQL refused in %s is invalid_request, not internal', (_, err) => {
    const body = toAppError(err).toBody();
    expect(body).toMatchObject({
      code: 'invalid_request',
      retryable: false,
      details: { reason: 'nul_character' },
    });
    expect(JSON.stringify(body)).not.toContain('UTF8');
  });
});
