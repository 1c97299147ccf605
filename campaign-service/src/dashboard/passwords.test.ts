import { hashPassword, verifyDecoy, verifyPassword } from './passwords';

describe('operator passwords', () => {
  it('hashes with scrypt and a per-user salt, and verifies', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]+\$[\w-]+$/);
    expect(a).not.toBe(b); // different salts
    expect(a).not.toContain('correct');
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('never matches malformed hashes', async () => {
    for (const bad of ['', 'plain', 'scrypt$1$1$1$$', 'bcrypt$x$y$z$a$b', 'scrypt$0$8$1$AAAA$AAAA']) {
      expect(await verifyPassword('x', bad)).toBe(false);
    }
  });

  it('the decoy verification refuses', async () => {
    expect(await verifyDecoy('anything')).toBe(false);
  });
});
