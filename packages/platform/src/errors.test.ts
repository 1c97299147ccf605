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

  it('round-trips an AppError through gRPC with its code, details and hint', () => {
    const original = new AppError('conflict', 'Campaign is not editable.', {
      details: { reason: 'not_editable' },
      hint: 'custom',
    });
    const back = fromServiceError(toServiceError(original));
    expect(back.toBody()).toEqual(original.toBody());
    expect(toServiceError(original).code).toBe(status.FAILED_PRECONDITION);
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
