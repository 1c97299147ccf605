import type { ServerUnaryCall } from '@grpc/grpc-js';
import pino from 'pino';
import { AppError } from './errors';
import { unary } from './grpc';
import { createMetrics } from './metrics';

const call = (request: unknown) => ({ request }) as ServerUnaryCall<unknown, unknown>;

describe('unary', () => {
  it('answers once and counts each call by method and gRPC status name', async () => {
    const metrics = createMetrics('test');
    const logger = pino({ level: 'silent' });
    const ok = unary(logger, 'Get', async () => ({ id: 'x' }), metrics);
    const missing = unary(
      logger,
      'Get',
      async () => {
        throw new AppError('not_found');
      },
      metrics,
    );
    const answers: unknown[] = [];
    await new Promise<void>((resolve) =>
      ok(call({}), (err, res) => {
        answers.push([err, res]);
        resolve();
      }),
    );
    await new Promise<void>((resolve) =>
      missing(call({}), (err) => {
        answers.push(err?.code);
        resolve();
      }),
    );
    expect(answers).toEqual([[null, { id: 'x' }], 5]);
    const text = await metrics.registry.getSingleMetricAsString('grpc_server_handled_total');
    expect(text).toMatch(/method="Get",code="OK",service="test"} 1/);
    expect(text).toMatch(/method="Get",code="NOT_FOUND",service="test"} 1/);
  });

  it('logs a failure underneath, not a refusal by the rules', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const failures = [
      new AppError('not_found'),
      new AppError('unavailable', undefined, { cause: new Error('connect ECONNREFUSED') }),
      new Error('a bug'),
    ];
    for (const failure of failures) {
      const handler = unary(logger, 'Get', async () => {
        throw failure;
      });
      await new Promise<void>((resolve) => handler(call({}), () => resolve()));
    }
    expect(
      lines.filter((l) => l.msg === 'grpc handler failed').map((l) => (l.err as { message: string }).message),
    ).toEqual(['The service is temporarily unavailable.: connect ECONNREFUSED', 'a bug']);
  });
});
