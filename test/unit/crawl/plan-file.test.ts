import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planCrawl } from '../../../core/crawl-plan.ts';
import { BASE_USDC } from '../../../core/networks.ts';
import type { SourceListing } from '../../../core/source-listing.ts';
import { normalizeUrl } from '../../../core/url.ts';
import { type PlanFile, planFileText } from '../../../crawl/run.ts';
import { writeFileDurably } from '../../../io/durable-file.ts';

/** `n` listings on 7 hosts, some with metadata text that needs escaping, some listed twice with different prices. */
function listings(n: number): SourceListing[] {
  return Array.from({ length: n }, (_, i) => {
    const url = `https://seller-${i % 7}.example/api/item-${i}?q="${i}"`;
    const listing: SourceListing = {
      url,
      urlNorm: normalizeUrl(url),
      method: i % 5 === 0 ? 'POST' : 'GET',
      priceUsd: 0.01,
      network: 'eip155:8453',
      asset: BASE_USDC,
      payTo: `0x${String(i % 9).repeat(40)}`,
      source: 'cdp',
      example: i % 4 === 0 ? { query: { city: 'Zürich "centre"' }, body: null } : null,
      metadata: {
        serviceName: `Service ${i} \\ “quoted”`,
        tags: ['a', 'ü'],
        description: null,
        iconUrl: null,
        lastUpdated: '2026-11-01T00:00:00.000Z',
      },
    };
    return i % 10 === 0 ? [listing, { ...listing, source: 'payai', priceUsd: 0.02 }] : [listing];
  }).flat();
}

function planFile(n: number): PlanFile {
  return {
    started_at: '2026-11-27T00:00:00.000Z',
    options: { concurrency: 21, per_host: 3, timeout_ms: 5000, limit: null },
    sources: { cdp: { ok: true, items: n, note: 'read', skipped: false } },
    plan: planCrawl(listings(n), null),
  };
}

describe('planFileText', () => {
  it('writes the bytes JSON.stringify writes, a bounded chunk at a time', async () => {
    for (const n of [0, 1, 3, 2000]) {
      const file = planFile(n);
      const chunks = [...planFileText(file)];
      expect(chunks.join('')).toBe(JSON.stringify(file));
      // A chunk is at most one endpoint past the bound, never the whole plan.
      expect(Math.max(...chunks.map((c) => c.length))).toBeLessThan((1 << 16) + 4096);
    }
    expect([...planFileText(planFile(2000))].length).toBeGreaterThan(5);
  });

  it('goes to disk through writeFileDurably as the same file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sc-plan-file-'));
    try {
      const file = planFile(500);
      await writeFileDurably(join(dir, 'plan.json'), planFileText(file));
      expect(await readFile(join(dir, 'plan.json'), 'utf8')).toBe(JSON.stringify(file));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
