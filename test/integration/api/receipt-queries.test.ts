/**
 * The queries of `GET /v1/receipts` and `GET /v1/receipts/by-url` are parsed with the very schemas `/openapi.json`
 * publishes (`ReceiptListQuerySchema`, `ReceiptByUrlQuerySchema`), each member carrying its stable 400 code: the
 * route and `parseInput` give the same code and words for every bad query, the answers are the ones the hand-written
 * parser gave before, and the published parameters state the paging bounds (page 1 to 1,000,000, page_size 1 to
 * 500) exactly as the route applies them, no looser and no stricter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInput } from '../../../core/input-codes.ts';
import { ReceiptByUrlQuerySchema, ReceiptListQuerySchema } from '../../../core/request-schemas.ts';
import { appFetch, startTestService, type TestService } from '../../helpers/service.ts';

let spot: TestService;
beforeAll(async () => {
  spot = await startTestService({}, {}, { listen: false });
});
afterAll(() => spot.stop());

const get = (path: string) => appFetch(spot.service, path, { ip: '203.0.113.60' });

/** The query as the route reads it: the first value of each name. */
const firstValues = (query: string): Record<string, string> => {
  const params = new URLSearchParams(query);
  return Object.fromEntries([...new Set(params.keys())].map((name) => [name, params.get(name) ?? '']));
};

const LONG_URL = `https://a.example/${'x'.repeat(2100)}`;
const whole = (max: number) => `Expected a whole number from 1 to ${max}.`;

/** Bad queries and their answers, as the hand-written parsers gave them. */
const LIST_400: Array<[string, string, string]> = [
  ['type=', 'bad_type', 'type must be dry-run or live.'],
  ['type=DRY-RUN', 'bad_type', 'type must be dry-run or live.'],
  ['type=all', 'bad_type', 'type must be dry-run or live.'],
  ['type=x&page=0&page_size=0', 'bad_type', 'type must be dry-run or live.'],
  ['page=0', 'bad_page', whole(1_000_000)],
  ['page=1000001', 'bad_page', whole(1_000_000)],
  ['page=00000001', 'bad_page', whole(1_000_000)],
  ['page=9999999', 'bad_page', whole(1_000_000)],
  ['page=-1', 'bad_page', whole(1_000_000)],
  ['page=%2B1', 'bad_page', whole(1_000_000)],
  ['page=1e3', 'bad_page', whole(1_000_000)],
  ['page=1.0', 'bad_page', whole(1_000_000)],
  ['page=%201', 'bad_page', whole(1_000_000)],
  ['page=x&page=1', 'bad_page', whole(1_000_000)],
  ['page=0&page_size=0', 'bad_page', whole(1_000_000)],
  ['page_size=0', 'bad_page_size', whole(500)],
  ['page_size=501', 'bad_page_size', whole(500)],
  ['page_size=00000500', 'bad_page_size', whole(500)],
  ['page_size=%EF%BC%95', 'bad_page_size', whole(500)],
  ['type=live&page_size=1000', 'bad_page_size', whole(500)],
];

const BY_URL_400: Array<[string, string, string]> = [
  ['', 'missing_url', 'Parameter url is required.'],
  ['url=', 'missing_url', 'Parameter url is required.'],
  ['method=PUT', 'missing_url', 'Parameter url is required.'],
  ['url=nope', 'bad_url', 'the URL is not an absolute URL'],
  ['url=nope&method=PUT', 'bad_url', 'the URL is not an absolute URL'],
  ['url=ftp%3A%2F%2Fa.example%2Fx', 'bad_url', 'only http and https URLs can be checked'],
  ['url=https%3A%2F%2Fa.example%2F%0Ax', 'bad_url', 'the URL contains control characters'],
  [
    'url=https%3A%2F%2Fu%3Ap%40a.example%2Fx',
    'bad_url',
    'the URL contains a user name or password; credentials are never sent to a seller or published',
  ],
  [`url=${encodeURIComponent(LONG_URL)}`, 'bad_url', 'the URL is longer than 2048 characters'],
  ['url=nope&url=https%3A%2F%2Fa.example%2Fx', 'bad_url', 'the URL is not an absolute URL'],
  ['url=https%3A%2F%2Fa.example%2Fx&method=', 'bad_method', 'method must be GET or POST.'],
  ['url=https%3A%2F%2Fa.example%2Fx&method=get', 'bad_method', 'method must be GET or POST.'],
  ['url=https%3A%2F%2Fa.example%2Fx&method=PUT&method=GET', 'bad_method', 'method must be GET or POST.'],
];

describe('GET /v1/receipts', () => {
  it.each(LIST_400)(
    '?%s answers 400 %s, and the schema it publishes says the same',
    async (query, code, message) => {
      const res = await get(`/v1/receipts?${query}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { code, message } });
      expect(parseInput(ReceiptListQuerySchema, firstValues(query))).toEqual({ ok: false, code, message });
    },
  );

  it.each([
    ['', 'all', 1, 50],
    ['page=&page_size=', 'all', 1, 50],
    ['type=live', 'live', 1, 50],
    ['type=dry-run&type=nope', 'dry-run', 1, 50],
    ['page=01&page_size=0500', 'all', 1, 500],
    ['page=0000001&page_size=0000001', 'all', 1, 1],
    ['page=1000000&page_size=500', 'all', 1_000_000, 500],
    ['page=2&page=x&page_size=7&unknown=1', 'all', 2, 7],
  ])('?%s answers type %s, page %i, page_size %i', async (query, type, page, pageSize) => {
    const res = await get(`/v1/receipts?${query}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ type, page, page_size: pageSize, total: 0, pages: 1, next: null });
    const prev =
      type === 'all' ? `page=1&page_size=${pageSize}` : `type=${type}&page=1&page_size=${pageSize}`;
    expect(body.prev).toBe(page > 1 ? `${spot.config.baseUrl}/v1/receipts?${prev}` : null);
  });
});

describe('GET /v1/receipts/by-url', () => {
  it.each(BY_URL_400)(
    '?%s answers 400 %s, and the schema it publishes says the same',
    async (query, code, message) => {
      const res = await get(`/v1/receipts/by-url?${query}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { code, message } });
      expect(parseInput(ReceiptByUrlQuerySchema, firstValues(query))).toEqual({ ok: false, code, message });
    },
  );

  it.each([
    'url=https%3A%2F%2Fa.example%2Fx',
    'url=https%3A%2F%2Fa.example%2Fx&method=POST',
    'url=https%3A%2F%2Fa.example%2Fx&method=GET&method=PUT',
  ])('?%s is a good query: 404 receipt_not_found before any receipt', async (query) => {
    const res = await get(`/v1/receipts/by-url?${query}`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('receipt_not_found');
  });
});

describe('the published parameters carry the paging bounds', () => {
  type Parameter = { name: string; in: string; schema: { pattern?: string; maxLength?: number } };
  let parameters: Parameter[];
  beforeAll(async () => {
    const document = (await (await get('/openapi.json')).json()) as {
      paths: Record<string, { get: { parameters: Parameter[] } }>;
    };
    parameters = document.paths['/v1/receipts']?.get.parameters ?? [];
  });
  /** Whether the published schema of query parameter `name` takes `text`. */
  const takes = (name: string, text: string) => {
    const schema = parameters.find((p) => p.name === name && p.in === 'query')?.schema;
    if (schema?.pattern === undefined) throw new Error(`${name} is published without a pattern`);
    return new RegExp(schema.pattern, 'u').test(text) && text.length <= (schema.maxLength ?? Infinity);
  };
  const padded = (n: number) => [String(n), `0${n}`, String(n).padStart(7, '0'), String(n).padStart(8, '0')];

  it('page_size: the published schema takes exactly what the route takes, 1 to 500', async () => {
    const texts = [
      ...Array.from({ length: 601 }, (_, n) => String(n)),
      ...[0, 1, 9, 10, 99, 100, 499, 500, 501].flatMap(padded),
    ];
    for (const text of texts) {
      const routed = (await get(`/v1/receipts?page_size=${text}`)).status === 200;
      expect(takes('page_size', text), `page_size=${text}`).toBe(routed);
    }
    expect(takes('page_size', '500') && !takes('page_size', '501') && !takes('page_size', '0')).toBe(true);
  });

  it('page: the published schema takes exactly what the route takes, 1 to 1,000,000', async () => {
    const edges = [
      0, 1, 9, 10, 99, 100, 999, 1000, 99_999, 100_000, 999_999, 1_000_000, 1_000_001, 9_999_999,
    ];
    for (const text of [...edges.flatMap(padded), '', 'x', '1e3', '-1', '10000000']) {
      if (text === '') continue; // not given: the default page
      const routed = (await get(`/v1/receipts?page=${text}`)).status === 200;
      expect(takes('page', text), `page=${text}`).toBe(routed);
    }
    expect(takes('page', '1000000') && !takes('page', '1000001') && !takes('page', '0')).toBe(true);
  });
});
