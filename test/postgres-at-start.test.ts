import { spawn } from 'node:child_process';
import path from 'node:path';
import type { RunningService } from '@outreach/platform';
import pino from 'pino';
import { startFaultProxy } from './support/fault-proxy';
import { createTestNamespace, type TestNamespace } from './support/isolation';
import { freePort } from './support/system';

// A service started while PostgreSQL is down waits for it, as it waits for NATS, instead of
// exiting into a crash loop; one whose login is refused still fails at once (operations.md,
// "When a store goes down").

type Start = (env: NodeJS.ProcessEnv, options?: { logger?: pino.Logger }) => Promise<RunningService>;

const SERVICES = ['link-runtime', 'campaign-service', 'recipient-service'] as const;
const ROOT = path.resolve(__dirname, '..');

let ns: TestNamespace;
beforeAll(async () => {
  ns = await createTestNamespace();
});
afterAll(() => ns?.cleanup());

/** A logger that keeps its lines (warn and above). */
function capturingLogger() {
  const lines: { level: number; msg: string; server?: string; attempt?: number }[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

async function serviceEnv(databaseUrl: string): Promise<Record<string, string>> {
  return {
    ...ns.env,
    HOST: '127.0.0.1',
    ADMIN_TOKEN: 'postgres-at-start-test-admin-token',
    DATABASE_URL: databaseUrl,
    LINK_PORT: '0',
    DASHBOARD_PORT: '0',
    CAMPAIGN_GRPC_PORT: '0',
    RECIPIENT_GRPC_PORT: '0',
    METRICS_PORT: '0',
    // The gRPC clients connect lazily: nothing needs to answer at these addresses.
    CAMPAIGN_SERVICE_ADDR: `127.0.0.1:${await freePort()}`,
    RECIPIENT_SERVICE_ADDR: `127.0.0.1:${await freePort()}`,
  };
}

/** The test database's URL, at `port` of this host, as `user`. */
function databaseUrlAt(port: number, user?: string): string {
  const url = new URL(ns.databaseUrl);
  url.host = `127.0.0.1:${port}`;
  if (user) url.username = user;
  return url.toString();
}

describe('a service started while PostgreSQL is down', () => {
  it('waits for it, saying so, and comes up once it answers', async () => {
    // A proxy to the real PostgreSQL that refuses connections (nothing listens) for the first second.
    const proxy = await startFaultProxy({
      host: '127.0.0.1',
      port: Number(new URL(ns.databaseUrl).port || 5432),
    });
    await proxy.cut();
    const env = await serviceEnv(databaseUrlAt(proxy.port));
    const logs = SERVICES.map(() => capturingLogger());
    const started: RunningService[] = [];
    try {
      const starting = SERVICES.map((name, i) =>
        (require(`@outreach/${name}`) as { start: Start }).start(env, { logger: logs[i].logger }),
      );
      // Nothing settles while PostgreSQL is out of reach.
      let settled = 0;
      for (const s of starting)
        s.then(
          () => settled++,
          () => settled++,
        );
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(settled).toBe(0);
      await proxy.restore();
      started.push(...(await Promise.all(starting)));
      for (const { lines } of logs) {
        expect(lines.length).toBeGreaterThan(0);
        expect(lines[0]).toMatchObject({
          level: 40,
          msg: 'PostgreSQL not reachable yet; trying again',
          server: `127.0.0.1:${proxy.port}`,
          attempt: 1,
        });
        expect(lines.filter((l) => l.level > 40)).toEqual([]);
      }
    } finally {
      for (const service of started) await service.stop();
      await proxy.close();
    }
  }, 60_000);

  it('fails at once when its login is refused', async () => {
    const port = Number(new URL(ns.databaseUrl).port || 5432);
    const env = await serviceEnv(databaseUrlAt(port, 'outreach_no_such_role'));
    const { logger, lines } = capturingLogger();
    const { start } = require('@outreach/link-runtime') as { start: Start };
    const begun = Date.now();
    await expect(start(env, { logger })).rejects.toMatchObject({ code: '28000' });
    expect(Date.now() - begun).toBeLessThan(3000);
    expect(lines.filter((l) => l.msg.includes('not reachable'))).toEqual([]);
  });

  it('fails at once when its database does not exist', async () => {
    const url = new URL(ns.databaseUrl);
    url.pathname = '/outreach_no_such_database';
    const { logger, lines } = capturingLogger();
    const { start } = require('@outreach/recipient-service') as { start: Start };
    const begun = Date.now();
    await expect(start(await serviceEnv(url.toString()), { logger })).rejects.toMatchObject({
      code: '3D000',
    });
    expect(Date.now() - begun).toBeLessThan(3000);
    expect(lines.filter((l) => l.msg.includes('not reachable'))).toEqual([]);
  });
});

/** Runs the built link runtime as Kubernetes does; resolves with its exit and its stdout lines. */
function runLinkRuntime(
  databaseUrl: string,
  onLine: (line: string, kill: (signal: NodeJS.Signals) => void) => void = () => undefined,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: string[]; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--require', '@outreach/platform/dist/instrumentation.js', 'link-runtime/dist/main.js'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...ns.env,
        LOG_LEVEL: 'info',
        DATABASE_URL: databaseUrl,
        LINK_PORT: '0',
        METRICS_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  let stderr = '';
  let rest = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      onLine(line, (signal) => child.kill(signal));
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) =>
    child.once('close', (code, signal) =>
      resolve({ code, signal, lines: rest ? [...lines, rest] : lines, stderr }),
    ),
  );
}

describe('the link runtime process', () => {
  it('ends promptly on SIGTERM while it waits for PostgreSQL', async () => {
    const port = await freePort();
    let signalledAt = 0;
    const { code, signal, lines } = await runLinkRuntime(databaseUrlAt(port), (line, kill) => {
      if (!signalledAt && line.includes('PostgreSQL not reachable yet')) {
        signalledAt = Date.now();
        kill('SIGTERM');
      }
    });
    expect(signalledAt).toBeGreaterThan(0);
    expect(Date.now() - signalledAt).toBeLessThan(2000);
    expect(code === 0 || signal === 'SIGTERM').toBe(true);
    expect(lines.some((l) => l.includes('failed to start'))).toBe(false);
  }, 30_000);

  it('says why it could not start in a JSON line and exits 1', async () => {
    const port = Number(new URL(ns.databaseUrl).port || 5432);
    const { code, lines, stderr } = await runLinkRuntime(databaseUrlAt(port, 'outreach_no_such_role'));
    expect(code).toBe(1);
    expect(stderr).not.toContain('failed to start');
    const fatal = lines.map((l) => JSON.parse(l)).find((l) => l.level === 60);
    expect(fatal).toMatchObject({
      service: 'link-runtime',
      msg: expect.stringContaining(
        'link-runtime failed to start: role "outreach_no_such_role" does not exist',
      ),
    });
  }, 30_000);
});
