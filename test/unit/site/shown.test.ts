/**
 * What the listing pages keep of a skip page and of the saves (`site/lib/schemas.ts`): the file is still checked
 * whole against its contract schema, and only the members the pages show go on into Astro's data store.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { SavesShown, SkipPageShown } from '../../../site/lib/schemas.ts';

const skip = {
  id: 'a1',
  url: 'https://a.example/x',
  claimed_price_usd: 0.01,
  quoted_price_usd: 0.02,
  pay_to: '0xabc',
  verdict: 'skip',
  reason: 'It asked for more than its listing.',
  reason_code: 'price_mismatch',
  timestamp: '2026-11-24T00:00:00.000Z',
  source_list: 'cdp',
  also_listed_in: ['payai'],
  method: 'GET',
  http_status: 402,
  network: 'eip155:8453',
  listed_network: 'eip155:8453',
  listed_pay_to: '0xabc',
  permalink: 'https://spotcheck.example/v1/receipts/sc-aaaaaaaaaaaaaaaaaaaaaaaaaa',
};
const page = {
  schema: 1,
  endpoints_covered: 10,
  new_this_week: 1,
  crawled_at: '2026-11-24T00:00:00.000Z',
  total_receipts: 10,
  pay: 8,
  skip: 1,
  recheck: 1,
  sources: { cdp: { ok: true, items: 10, note: '1 page' } },
  dedupe: 'url',
  method: 'probe',
  spot_check: 'https://spotcheck.example/v1/check',
  featured_mismatch: null,
  page_size: 500,
  page: 1,
  pages: 1,
  skips: [skip],
};
const save = {
  id: 'b2',
  url: 'https://b.example/y',
  method: 'POST',
  kind: 'other_wallet',
  reason_code: 'pay_to_mismatch',
  reason: 'The wallet asked for differs from the expected wallet.',
  listed_price_usd: 0.01,
  quoted_price_usd: 0.01,
  listed_pay_to: '0xaaa',
  pay_to: '0xbbb',
  listed_network: 'eip155:8453',
  network: 'eip155:8453',
  source_list: 'cdp',
  timestamp: '2026-11-24T00:00:00.000Z',
  permalink: 'https://spotcheck.example/v1/receipts/sc-bbbbbbbbbbbbbbbbbbbbbbbbbb',
  run_id: 'r1',
  receipt: { id: 'sc-bbbbbbbbbbbbbbbbbbbbbbbbbb', signature: 'x'.repeat(88) },
};
const saves = {
  schema: 1,
  generated_at: page.crawled_at,
  window_days: 30,
  since: page.crawled_at,
  count: 1,
  saves: [save],
};

describe('the members the listing pages keep', () => {
  it('keeps of each skip only what the skip page shows', () => {
    const shown = v.parse(SkipPageShown, page);
    const {
      pay_to,
      verdict,
      reason,
      also_listed_in,
      http_status,
      network,
      listed_network,
      listed_pay_to,
      ...onThePage
    } = skip;
    expect(shown.skips).toEqual([onThePage]);
    expect(shown.pages).toBe(1);
  });

  it('keeps of each save what the saves page shows, not the signed receipt it carries', () => {
    const [shown] = v.parse(SavesShown, saves).saves;
    expect(shown).not.toHaveProperty('receipt');
    const { reason_code, reason, source_list, run_id, receipt, ...onThePage } = save;
    expect(shown).toEqual(onThePage);
  });

  it('still checks the members it drops against the contract', () => {
    expect(v.safeParse(SkipPageShown, { ...page, skips: [{ ...skip, http_status: '402' }] }).success).toBe(
      false,
    );
    expect(
      v.safeParse(SavesShown, { ...saves, saves: [{ ...save, receipt: { signature: 'x' } }] }).success,
    ).toBe(false);
  });
});
