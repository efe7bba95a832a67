import { describe, expect, it } from 'vitest';
import { type CrawlFacts, shortId } from '../../../core/crawl-facts.ts';
import { summarizeRun } from '../../../core/crawl-summary.ts';
import { BASE, BASE_USDC, isCanonicalUsdc, SOLANA } from '../../../core/networks.ts';
import { REASONS } from '../../../core/reasons.ts';
import { rulesDocument } from '../../../core/rules.ts';
import { buildSaves, redact } from '../../../core/saves.ts';
import { buildSkipPages, SKIP_PAGE_SIZE } from '../../../core/skip-listing.ts';
import { PER_DOMAIN, PER_HOST } from '../../../crawl/run.ts';
import { MAX_IN_FLIGHT_PER_ADDRESS } from '../../../io/probe/address-slots.ts';

const BASE_URL = 'https://spotcheck.example';

function fact(i: number, more: Partial<CrawlFacts> = {}): CrawlFacts {
  const id = `sc-${String(i).padStart(26, 'a')}`;
  return {
    id,
    short_id: shortId(id),
    url: `https://h${i % 7}.example/p/${i}`,
    url_norm: `https://h${i % 7}.example/p/${i}`,
    host: `h${i % 7}.example`,
    method: 'GET',
    issued_at: '2026-11-24T01:00:00.000Z',
    probed_at: '2026-11-24T01:00:00.000Z',
    verdict: 'skip',
    reason: 'no_paywall',
    http_status: 200,
    quoted_price_usd: null,
    pay_to: null,
    network: null,
    listed_price_usd: null,
    listed_pay_to: null,
    listed_network: null,
    expected_source: null,
    source_list: 'cdp',
    also_listed_in: [],
    receipt_url: `${BASE_URL}/v1/receipts/${id}`,
    observation: null,
    ...more,
  };
}

function summary(facts: CrawlFacts[], previousUrls: string[] | null = null) {
  return summarizeRun({
    runId: '20261124T010000Z-abcd',
    startedAt: '2026-11-24T00:59:00.000Z',
    crawledAt: '2026-11-24T01:01:00.000Z',
    durationS: 120,
    facts,
    previous: previousUrls === null ? null : { runId: '20261117T010000Z-0000', urls: new Set(previousUrls) },
    sources: { cdp: { ok: true, items: facts.length, note: 'x', skipped: false } },
    lists: { cdp: facts.length },
    listedIn: { cdp: facts.length },
    saves: 0,
    interrupted: 0,
  });
}

describe('summarizeRun', () => {
  it('counts verdicts, reasons, hosts and what is new since the previous run', () => {
    const facts = [
      fact(1),
      fact(2, { verdict: 'pay', reason: 'price_ok' }),
      fact(3, { verdict: 'recheck', reason: 'timeout' }),
    ];
    const s = summary(facts, [facts[0]!.url_norm]);
    expect(s).toMatchObject({
      endpoints_covered: 3,
      new_this_week: 2,
      previous_run: '20261117T010000Z-0000',
      pay: 1,
      skip: 1,
      recheck: 1,
      hosts: 3,
    });
    expect(Object.keys(s.reasons)).toEqual([...REASONS]);
    expect(summary(facts).new_this_week).toBe(3);
  });
});

describe('buildSkipPages', () => {
  it('pages skips by 500 with working next/prev and every spec member', () => {
    const facts = Array.from({ length: SKIP_PAGE_SIZE + 3 }, (_, i) => fact(i));
    facts.push(fact(9999, { verdict: 'pay', reason: 'price_ok' }));
    const pages = buildSkipPages(facts, summary(facts), BASE_URL, null);
    expect(pages).toHaveLength(2);
    expect(pages[0]).toMatchObject({
      page: 1,
      pages: 2,
      prev: null,
      next: `${BASE_URL}/v1/skips.json?page=2`,
      page_size: 500,
    });
    expect(pages[1]).toMatchObject({ page: 2, next: null, prev: `${BASE_URL}/v1/skips.json?page=1` });
    expect(pages[0]!.skips).toHaveLength(500);
    expect(pages[1]!.skips).toHaveLength(3);
    expect(Object.keys(pages[0]!)).toEqual([
      'schema',
      'free_check',
      'endpoints_covered',
      'new_this_week',
      'previous_run',
      'crawled_at',
      'total_receipts',
      'skip',
      'pay',
      'recheck',
      'carried',
      'delisted',
      'check_type',
      'lists',
      'listed_in',
      'sources',
      'dedupe',
      'method',
      'spot_check',
      'featured_mismatch',
      'skip_pages',
      'page_size',
      'receipts',
      'skips_html',
      'skips_json',
      'receipt_by_url',
      'page',
      'pages',
      'next',
      'prev',
      'skips',
    ]);
  });

  it('writes each record with the spec members, optional prices only when known', () => {
    const mismatch = fact(1, {
      reason: 'pay_to_mismatch',
      quoted_price_usd: 0.01,
      listed_price_usd: 0.01,
      pay_to: '0xlive',
      listed_pay_to: '0xlisted',
      network: 'eip155:8453',
      listed_network: 'eip155:8453',
      http_status: 402,
    });
    const [page] = buildSkipPages(
      [mismatch, fact(2, { http_status: null })],
      summary([mismatch]),
      BASE_URL,
      null,
    );
    expect(page!.featured_mismatch).toBe(mismatch.receipt_url);
    // Ordered by reason code: no_paywall before pay_to_mismatch.
    const [bare, record] = page!.skips;
    expect(record).toEqual({
      id: mismatch.short_id,
      url: mismatch.url,
      claimed_price_usd: 0.01,
      quoted_price_usd: 0.01,
      pay_to: '0xlive',
      verdict: 'skip',
      reason: 'The wallet asked for differs from the expected wallet.',
      reason_code: 'pay_to_mismatch',
      timestamp: mismatch.probed_at,
      source_list: 'cdp',
      also_listed_in: [],
      check_type: 'dry-run',
      method: 'GET',
      http_status: 402,
      network: 'eip155:8453',
      listed_network: 'eip155:8453',
      listed_pay_to: '0xlisted',
      permalink: mismatch.receipt_url,
    });
    expect(bare).not.toHaveProperty('claimed_price_usd');
    expect(bare).toMatchObject({ http_status: 0, pay_to: '', network: '' });
    expect(mismatch.short_id).toMatch(/^[0-9a-f]{12}$/);
  });

  it('has one empty page when nothing was skipped', () => {
    const pages = buildSkipPages([], summary([]), BASE_URL, null);
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ pages: 1, skips: [], next: null, featured_mismatch: null });
  });
});

describe('buildSaves', () => {
  const now = new Date('2026-11-24T02:00:00.000Z');
  const receipt = { id: 'x', verdict: 'skip', kid: 'k', signature: 's' };
  it('keeps listing mismatches, newest first, one per endpoint, inside 30 days', () => {
    const price = fact(1, { reason: 'price_mismatch', expected_source: 'listing' });
    const callerSide = fact(2, { reason: 'pay_to_mismatch', expected_source: 'request' });
    const old = {
      ...buildSaves({
        now,
        runId: 'r0',
        facts: [price],
        receipts: new Map([[price.id, receipt]]),
        earlier: [],
      }).saves[0]!,
      timestamp: '2026-10-01T00:00:00.000Z',
      url_norm: 'https://old',
    };
    const saves = buildSaves({
      now,
      runId: 'r1',
      facts: [price, callerSide],
      receipts: new Map([
        [price.id, receipt],
        [callerSide.id, receipt],
      ]),
      earlier: [old],
    });
    expect(saves).toMatchObject({ count: 1, window_days: 30, since: '2026-10-25T02:00:00.000Z' });
    expect(saves.saves[0]).toMatchObject({ kind: 'asked_more', run_id: 'r1', receipt });
  });

  it('keeps no earlier entry of an endpoint this run found disputed', () => {
    const wallet = fact(3, { reason: 'pay_to_mismatch', expected_source: 'listing' });
    const earlier = buildSaves({
      now,
      runId: 'r0',
      facts: [wallet],
      receipts: new Map([[wallet.id, receipt]]),
      earlier: [],
    }).saves;
    expect(earlier).toHaveLength(1);
    const disputed = fact(4, {
      url: wallet.url,
      url_norm: wallet.url_norm,
      verdict: 'pay',
      reason: 'price_ok',
      disputed: ['pay_to'],
    });
    const saves = buildSaves({ now, runId: 'r1', facts: [disputed], receipts: new Map(), earlier });
    expect(saves).toMatchObject({ count: 0, saves: [] });
  });

  it('redacts who asked, and drops a signature that would no longer verify', () => {
    expect(redact({ id: 'x', client: 'me', kid: 'k', signature: 's' })).toEqual({ id: 'x', redacted: true });
    expect(redact(receipt)).toBe(receipt);
  });
});

describe('rulesDocument', () => {
  it('names every reason once in the verdict rules, with its words, and snake_case limits', () => {
    const rules = rulesDocument();
    expect(rules.reasons.map((r) => r.code)).toEqual([...REASONS]);
    expect(rules.verdict_rules.flatMap((r) => r.reason_codes).sort()).toEqual([...REASONS].sort());
    expect(rules.limits).toMatchObject({
      free_checks_per_day: 5,
      skip_page_size: 500,
      crawl_in_flight_per_host: PER_HOST,
      crawl_in_flight_per_domain: PER_DOMAIN,
      probe_in_flight_per_address: MAX_IN_FLIGHT_PER_ADDRESS,
    });
    expect(rules.crawl_method).toContain(
      `${PER_HOST} requests in flight per host, ${PER_DOMAIN} per registrable domain and ${MAX_IN_FLIGHT_PER_ADDRESS} per server`,
    );
    expect(rules.free_trial_headers.map((h) => h.header)).toContain('x-free-trial-remaining');
    expect(rules.hosted_bands.map((b) => b.band)).toEqual(['free_allowance', 'standard', 'volume']);
  });

  it('says a free-trial header that cannot be read still announces a trial, with no count', () => {
    const rules = rulesDocument();
    const trial = rules.verdict_rules.find((r) => r.reason_codes.includes('free_trial_active'));
    expect(trial?.rule).toMatch(/cannot be read/);
    expect(trial?.rule).toMatch(/free_trial_remaining/);
    for (const { header, meaning } of rules.free_trial_headers)
      expect(meaning, header).toMatch(/(active, count unknown|Same meaning)/);
    expect(rules.free_trial_headers.map((h) => h.header)).toEqual([
      'x-free-trial-remaining',
      'x-trial-remaining',
      'x-trial-used',
      'x-free-trial',
    ]);
  });

  it('says when listings are disputed, and that a variant of a URL never changes its public state', () => {
    const rules = rulesDocument();
    expect(rules.listing_disputes.join(' ')).toMatch(/\/\.well-known\/x402.*outranks third-party listings/);
    expect(rules.listing_disputes.join(' ')).toMatch(/not exported.*saves list.*reputation/);
    expect(rules.public_state.join(' ')).toMatch(/exactly the endpoint’s listed form/);
  });

  it('says how known answers are judged: fresh inputs, exact fields, one task per answer, a wallet per run', () => {
    const text = rulesDocument().known_answers.join(' ');
    expect(text).toMatch(/fresh inputs drawn from a random seed/);
    expect(text).toMatch(/exact field by JSON pointer \(RFC 6901\)/);
    expect(text).toMatch(/from its first character to its last/);
    expect(text).toMatch(/passes another task of the run.*fails \(passes_other_task\)/);
    expect(text).toMatch(/at least 6 rows/);
    expect(text).toMatch(/wallet derived for that run alone/);
  });

  it('lists the supported mainnets the verdict rules name, with their USDC, and no testnet', () => {
    const networks = rulesDocument().supported_networks;
    expect(networks).toContainEqual({
      network: BASE,
      usdc: BASE_USDC,
      name: 'USD Coin',
      version: '2',
      decimals: 6,
    });
    expect(networks.map((n) => n.network)).toContain(SOLANA);
    expect(networks.map((n) => n.network)).not.toContain('eip155:84532'); // Base Sepolia
    for (const { network, usdc } of networks) expect(isCanonicalUsdc(network, usdc)).toBe(true);
  });
});
