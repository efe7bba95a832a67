import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkRow } from '../../fixtures/check-row.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const HOUR = 3_600_000;
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();

describe('live badges', () => {
  let t: TestService;
  const get = (path: string) => t.service.app.fetch(new Request(`http://127.0.0.1${path}`));

  beforeAll(async () => {
    t = await startTestService({}, { now: () => NOW }, { listen: false });
    t.service.deps.store.indexReceipts([
      checkRow('sc-1', 'https://fresh.example/a', 'pay', ago(HOUR)),
      checkRow('sc-2', 'https://old.example/a', 'pay', ago(73 * HOUR)),
      checkRow('sc-3', 'https://fresh.example/b', 'skip', ago(2 * HOUR)),
      // A caller's dry run with their own wallet must not grey out the host.
      checkRow('sc-4', 'https://fresh.example/a', 'skip', ago(60_000), { mode: 'dry-run' }),
    ]);
  });
  afterAll(() => t.stop());

  it('is green with the stable days while the latest public check is a fresh pay', async () => {
    const res = await get('/badge/fresh.example.svg');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers.get('x-badge-state')).toBe('pay');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await res.text()).toContain('aria-label="spotcheck: pay · stable 6 days"');
  });

  it('is grey stale when the latest check is older than 72 h, and not verified for an unknown host', async () => {
    expect((await get('/badge/old.example.svg')).headers.get('x-badge-state')).toBe('stale');
    const unknown = await get('/badge/nobody.example.json');
    expect(await unknown.json()).toEqual({
      schemaVersion: 1,
      label: 'spotcheck',
      message: 'not verified',
      color: 'lightgrey',
      cacheSeconds: 300,
    });
  });

  it('narrows to an exact path with ?path=', async () => {
    const res = await get('/badge/fresh.example.json?path=/b');
    expect((await res.json()).message).toBe('not verified');
  });

  it('answers any number of unique ?path= values of a host from one read of the store', async () => {
    // Each unique path used to read and scan the host's 500 newest receipts: 30 times the CPU of a host badge,
    // unauthenticated. The host's paths are read once, per lookup period, and every path is answered from them.
    t.service.deps.store.indexReceipts([
      checkRow('sc-10', 'https://many.example/listed', 'pay', ago(HOUR)),
      checkRow('sc-11', 'https://many.example/other', 'skip', ago(HOUR)),
    ]);
    const reads = vi.spyOn(t.service.deps.store, 'publicChecksByHost');
    try {
      for (let i = 0; i < 50; i++) {
        const res = await get(`/badge/many.example.svg?path=/unique/${i}`);
        expect(res.headers.get('x-badge-state')).toBe('not_verified');
      }
      expect((await get('/badge/many.example.svg?path=/listed')).headers.get('x-badge-state')).toBe('pay');
      expect((await get('/badge/many.example.svg?path=/listed/')).headers.get('x-badge-state')).toBe('pay');
      expect((await get('/badge/many.example.svg?path=/other')).headers.get('x-badge-state')).toBe(
        'not_verified',
      );
      expect(reads.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('renders a PNG', async () => {
    const res = await get('/badge/fresh.example.png');
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await res.arrayBuffer()).subarray(1, 4)).toEqual(new TextEncoder().encode('PNG'));
  });

  it('refuses a host or path that is not one, as a JSON 400', async () => {
    const bad = await get('/badge/..%2Fetc.svg');
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe('bad_host');
    const badPath = await get('/badge/fresh.example.svg?path=nope');
    expect((await badPath.json()).error.code).toBe('bad_path');
  });
});

describe('live badges between lookups', () => {
  it('turn grey at the 72 h mark even while the latest check is remembered, and show a new check once the 10 s lookup has refreshed', async () => {
    let clock = NOW.getTime();
    const t = await startTestService({}, { now: () => new Date(clock) }, { listen: false });
    try {
      const state = async () =>
        (await t.service.app.fetch(new Request('http://127.0.0.1/badge/edge.example.svg'))).headers.get(
          'x-badge-state',
        );
      t.service.deps.store.indexReceipts([
        checkRow('sc-1', 'https://edge.example/a', 'pay', ago(72 * HOUR - 3000)),
      ]);
      expect(await state()).toBe('pay');
      clock += 5000; // past 72 h, inside the lookup's 10 s
      expect(await state()).toBe('stale');
      t.service.deps.store.indexReceipts([
        checkRow('sc-2', 'https://edge.example/a', 'pay', new Date(clock).toISOString()),
      ]);
      clock += 10_000;
      // Past the 10 s the remembered check answers once more, on time, while one lookup refreshes it.
      expect(await state()).toBe('stale');
      await vi.waitFor(async () => expect(await state()).toBe('pay'), { timeout: 20_000 });
      // Long past the lookup (10 s + 60 s), the answer waits for the store instead.
      t.service.deps.store.indexReceipts([
        checkRow('sc-3', 'https://edge.example/a', 'skip', new Date(clock).toISOString()),
      ]);
      clock += 71_000;
      expect(await state()).toBe('not_verified');
    } finally {
      await t.stop();
    }
  });
});
