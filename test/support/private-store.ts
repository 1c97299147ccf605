import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './system';

/**
 * A Redis or NATS server of one test's own, on a free port, that the test may kill and start
 * again: the shared servers cannot go down without failing every other suite.
 */
export interface PrivateStore {
  url: string;
  /** Kills the server at once (SIGKILL), as a crash or a lost node would. */
  kill(): Promise<void>;
  /** Stops the server's process (SIGSTOP): connections stay open and nothing answers, as in a partition. */
  pause(): Promise<void>;
  /** Lets a paused server go on (SIGCONT). */
  resume(): Promise<void>;
  /** Starts it again on the same port (Redis comes back empty; NATS with its JetStream files). */
  restart(): Promise<void>;
  /** Starts it again if it is down: services stop cleanly only with their stores there. */
  up(): Promise<void>;
  /** Kills it and starts it again without its files, as a server whose disk was lost. */
  restartEmpty(): Promise<void>;
  /** Kills it and removes its files. */
  remove(): Promise<void>;
}

const BINARIES = { redis: 'redis-server', nats: 'nats-server' };

/** The server's path: Debian puts nats-server in /usr/sbin, which a user's PATH may lack. */
function binary(kind: keyof typeof BINARIES): string {
  const name = BINARIES[kind];
  return ['/usr/bin', '/usr/sbin', '/usr/local/bin'].map((d) => path.join(d, name)).find(existsSync) ?? name;
}

/** Starts a private `kind` server; resolves once it accepts connections. */
export async function startPrivateStore(kind: 'redis' | 'nats'): Promise<PrivateStore> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), `outreach-${kind}-`));
  const args =
    kind === 'redis'
      ? ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
      : ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir];
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn(binary(kind), args, { stdio: 'ignore' });
    await untilAccepting(port, child);
  };
  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    await new Promise((resolve) => {
      c.once('exit', resolve);
      c.kill('SIGKILL');
    });
  };
  await launch();
  return {
    url: `${kind}://127.0.0.1:${port}`,
    kill,
    pause: async () => {
      child?.kill('SIGSTOP');
    },
    resume: async () => {
      child?.kill('SIGCONT');
    },
    restart: launch,
    up: async () => {
      if (!child || child.exitCode !== null || child.signalCode !== null) await launch();
    },
    restartEmpty: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      await launch();
    },
    remove: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function untilAccepting(port: number, child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${child.spawnfile} exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${child.spawnfile} did not accept connections on ${port} within ${timeoutMs} ms`);
}
