import { createServer } from 'node:http';
import { closeServer, listen } from './listen';

describe('listen', () => {
  it('rejects a taken port', async () => {
    const first = createServer();
    const port = await listen(first, 0, '127.0.0.1');
    try {
      await expect(listen(createServer(), port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await closeServer(first);
    }
  });

  it('keeps serving through later server errors (an accept failing with EMFILE) instead of crashing', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    const port = await listen(server, 0, '127.0.0.1');
    try {
      // An 'error' event with no listener is thrown: this would crash the process.
      for (let i = 0; i < 2; i++)
        server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' }));
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
    } finally {
      await closeServer(server);
    }
  });
});
