import { connect } from 'node:net';

// ioredis's monitor() switches its parser to monitor lines only after MONITOR's reply has been
// handled, so lines that arrive in the same read as that reply (a busy shared Redis sends them at
// once) reach an empty command queue and fail the client with "Command queue state error". A plain
// socket reads the stream as it is: one `+OK`, then one line per command.

/** A MONITOR connection that calls `onCommand` with each command's arguments until `stop`. */
export interface RedisMonitor {
  stop(): void;
}

/** Opens a MONITOR connection to `url` and resolves once Redis has begun to report commands. */
export function monitorRedis(url: string, onCommand: (args: string[]) => void): Promise<RedisMonitor> {
  const { hostname, port, username, password } = new URL(url);
  const socket = connect(Number(port || 6379), hostname || '127.0.0.1');
  const replies: string[] = [];
  if (password) replies.push(command(username ? ['AUTH', username, password] : ['AUTH', password]));
  replies.push(command(['MONITOR']));
  socket.write(replies.join(''));
  let pendingOks = replies.length;
  return new Promise((resolve, reject) => {
    let buffered = '';
    socket.setEncoding('utf8');
    socket.once('error', reject);
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end = buffered.indexOf('\r\n');
      while (end !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        end = buffered.indexOf('\r\n');
        if (pendingOks > 0) {
          if (line !== '+OK') {
            socket.destroy();
            reject(new Error(`Redis refused MONITOR: ${line}`));
            return;
          }
          pendingOks -= 1;
          if (pendingOks === 0) resolve({ stop: () => socket.destroy() });
          continue;
        }
        onCommand(monitorArgs(line));
      }
    });
  });
}

function command(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' };

/** The arguments of a MONITOR line (`+<time> [<db> <client>] "arg" "arg" …`), unescaped. */
export function monitorArgs(line: string): string[] {
  const args: string[] = [];
  let i = line.indexOf('] ');
  if (i === -1) return args;
  i += 2;
  while (i < line.length) {
    if (line[i] !== '"') {
      i += 1;
      continue;
    }
    // Redis writes every byte outside printable ASCII as \xHH: collect bytes, then decode UTF-8.
    const bytes: number[] = [];
    i += 1;
    while (i < line.length && line[i] !== '"') {
      if (line[i] === '\\' && line[i + 1] === 'x') {
        bytes.push(Number.parseInt(line.slice(i + 2, i + 4), 16));
        i += 4;
      } else if (line[i] === '\\') {
        bytes.push((ESCAPES[line[i + 1]] ?? line[i + 1]).charCodeAt(0));
        i += 2;
      } else {
        bytes.push(line.charCodeAt(i));
        i += 1;
      }
    }
    args.push(Buffer.from(bytes).toString('utf8'));
    i += 1;
  }
  return args;
}
