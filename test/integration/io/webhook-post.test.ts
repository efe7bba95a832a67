/**
 * The webhook poster's gate (`io/probe/webhook-post.ts`): a receiver whose name resolves to a private address is
 * refused at every delivery, also when the name resolved to a public one before, and no connection is attempted;
 * redirects are not followed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseCidrList } from '../../../core/ssrf.ts';
import { createWebhookPoster } from '../../../io/probe/webhook-post.ts';

describe('webhook poster gate', () => {
  it('refuses a name that now resolves to a private address, without connecting', async () => {
    let answer = '93.184.216.34';
    const connects: string[] = [];
    const poster = createWebhookPoster({
      lookup: async () => [{ address: answer, family: 4 }],
      connect: (target) => {
        connects.push(target.address);
        throw new Error('no network in this test');
      },
    });
    expect(await poster.gate('https://hooks.example/in')).toBeNull();
    answer = '10.0.0.5';
    expect(await poster.gate('https://hooks.example/in')).toMatch(/10\.0\.0\.5/);
    const result = await poster.post('https://hooks.example/in', {}, '{}');
    expect(result.kind).toBe('blocked');
    for (const host of [
      'http://127.0.0.1/x',
      'http://[::1]/x',
      'http://169.254.169.254/latest',
      'file:///etc/passwd',
    ]) {
      expect((await poster.post(host, {}, '{}')).kind).toBe('blocked');
    }
    expect(connects).toEqual([]);
  });

  it('does not follow a redirect: the 3xx is the attempt’s status', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const poster = createWebhookPoster({ allow: parseCidrList('127.0.0.0/8') });
      const result = await poster.post(`http://127.0.0.1:${port}/hook`, { 'webhook-id': 'we-1' }, '{"a":1}');
      expect(result).toEqual({ kind: 'status', status: 302 });
      expect(hits).toBe(1);
    } finally {
      server.close();
    }
  });
});
