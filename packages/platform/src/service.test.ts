import { spawn } from 'node:child_process';
import path from 'node:path';

// Run as its own process from the build (as services run), since runMain ends its process.
const SERVICE_JS = path.resolve(__dirname, '../dist/service.js');

/** Runs a service through runMain whose telemetry takes 200 ms to send its spans; its output. */
function runUntilStopped(startFails: boolean): Promise<{ code: number | null; stdout: string }> {
  const script = `
    const { registerTelemetry, runMain } = require(${JSON.stringify(SERVICE_JS)});
    registerTelemetry({
      shutdown: () => new Promise((resolve) => setTimeout(() => { console.log('spans sent'); resolve(); }, 200)),
    });
    runMain('probe', async () => {
      if (${startFails}) throw new Error('no store');
      // Said once runMain has its signal handlers, which it sets when this start resolves.
      setTimeout(() => console.log('started'), 20);
      // Kept alive as a listening server keeps a service alive.
      const alive = setInterval(() => undefined, 1000);
      return {
        name: 'probe',
        ports: {},
        stop: async () => {
          clearInterval(alive);
          console.log('stopped');
        },
      };
    });
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (chunk.includes('started')) child.kill('SIGTERM');
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout })));
}

describe('runMain', () => {
  it("sends the telemetry's last spans before a stopped service exits", async () => {
    const { code, stdout } = await runUntilStopped(false);
    expect(stdout.split('\n').filter(Boolean)).toEqual(['started', 'stopped', 'spans sent']);
    expect(code).toBe(0);
  });

  it('sends them too when the service could not start', async () => {
    const { code, stdout } = await runUntilStopped(true);
    expect(stdout).toContain('spans sent');
    expect(code).toBe(1);
  });
});
