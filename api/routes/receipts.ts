/**
 * Receipts are public and free to read (docs/api.md §4): one by id, a URL's public state (the newest receipt that
 * `core/public-state.ts` accepts: never a dry run or a caller's own expectation, and only in the endpoint's listed
 * form, else exactly the URL and method asked, `method` GET unless given), and a paged list.
 *
 * Paging: `page` is 1-based, `page_size` 1 to 500 (default 50), newest first; `type=dry-run` keeps dry runs only,
 * `type=live` live checks only. The answer carries `total`, `pages`, and `next`/`prev` URLs. Both queries are parsed
 * with the schemas `/openapi.json` publishes (`core/request-schemas.ts`), which carry their 400 codes.
 */
import type { H3, H3Event } from 'h3';
import type * as v from 'valibot';
import { parseInput } from '../../core/input-codes.ts';
import { publicFormOf } from '../../core/public-state.ts';
import { isReceiptId, receiptUrlOf } from '../../core/receipt.ts';
import { ReceiptByUrlQuerySchema, ReceiptListQuerySchema } from '../../core/request-schemas.ts';
import type { AppDeps } from '../deps.ts';
import { apiError } from '../errors.ts';
import { receiptHtml, wantsHtml } from '../html-pages.ts';

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** On a by-url answer: when the published crawl found that no source lists the endpoint any more (docs/api.md). */
export const DELISTED_HEADER = 'x-delisted-at';

/** Registers the receipt routes. */
export function receiptRoutes(app: H3, deps: AppDeps): void {
  app.get('/v1/receipts/by-url', async (event) => {
    const query = parseQuery(event, ReceiptByUrlQuerySchema);
    const target = query.url;
    const method = query.method ?? 'GET';
    // Only receipts of the endpoint's listed form, else of exactly what is asked, are its public state: a check
    // of a variant (a trailing slash, another method) never becomes the URL's record.
    const listing = await deps.store.listing(target.normalized, method);
    const form = publicFormOf(listing, { url: target.url, method });
    const receipt = await deps.store.latestReceiptByUrl(target.normalized, form);
    if (!receipt) {
      throw apiError(
        404,
        'receipt_not_found',
        'No public receipt for that URL yet: dry runs, checks made with the caller’s own pay_to, network, claimed_price or expiry check, and checks of another form of the URL or another method than its listed one (or, unlisted, the one asked) are not a URL’s public state.',
      );
    }
    // The answer is the signed receipt, whose bytes a member added would break: a delisting rides in a header.
    const delisting = await deps.delistings?.of(target.normalized, method);
    if (delisting) event.res.headers.set(DELISTED_HEADER, delisting.delisted_at);
    return answerReceipt(event, deps, receipt, 'public, max-age=60', false);
  });

  app.get('/v1/receipts/:id', async (event) => {
    const param = event.context.params?.id ?? '';
    // `{id}.json` is always the JSON: the raw link of a receipt's page (docs/api.md §4 "Pages for browsers").
    const raw = param.endsWith('.json');
    const id = raw ? param.slice(0, -'.json'.length) : param;
    const receipt = isReceiptId(id) ? await deps.ledger.get(id) : null;
    if (!receipt) throw apiError(404, 'receipt_not_found', 'No receipt has that id.');
    return answerReceipt(event, deps, receipt, IMMUTABLE, raw);
  });

  app.get('/v1/receipts', async (event) => {
    const query = parseQuery(event, ReceiptListQuerySchema);
    const type = query.type;
    const page = query.page ?? 1;
    const pageSize = query.page_size ?? 50;
    const result = await deps.store.listReceipts({ ...(type ? { mode: type } : {}), page, pageSize });
    const pages = Math.max(1, Math.ceil(result.total / pageSize));
    const link = (n: number) =>
      `${deps.baseUrl}/v1/receipts?${new URLSearchParams({ ...(type ? { type } : {}), page: String(n), page_size: String(pageSize) })}`;
    return {
      type: type ?? 'all',
      page,
      page_size: pageSize,
      total: result.total,
      pages,
      next: page < pages ? link(page + 1) : null,
      prev: page > 1 ? link(Math.min(page - 1, pages)) : null,
      receipts: result.items.map((item) => ({
        id: item.id,
        type: item.type,
        issued_at: item.issuedAt,
        url: item.url,
        method: item.method,
        verdict: item.verdict,
        reason: item.reason,
        check_type: item.checkType,
        mode: item.mode,
        receipt_url: receiptUrlOf(deps.baseUrl, item.id),
      })),
    };
  });
}

/** A receipt as JSON, or as its page for a browser; either form says it depends on `Accept`. */
function answerReceipt(
  event: H3Event,
  deps: AppDeps,
  receipt: Record<string, unknown>,
  cacheControl: string,
  raw: boolean,
) {
  if (!raw && wantsHtml(event))
    return receiptHtml(receipt, { baseUrl: deps.baseUrl, siteDir: deps.site?.dir, cacheControl });
  event.res.headers.set('cache-control', cacheControl);
  if (!raw) event.res.headers.set('vary', 'accept');
  return receipt;
}

/**
 * The query parsed with the schema `/openapi.json` publishes for the route; a repeated parameter counts by its
 * first value, as these routes always read it. Throws the 400 of the first bad member.
 */
function parseQuery<const T extends v.GenericSchema>(event: H3Event, schema: T): v.InferOutput<T> {
  const params = new URL(event.req.url).searchParams;
  const raw = Object.fromEntries([...new Set(params.keys())].map((name) => [name, params.get(name)]));
  const parsed = parseInput(schema, raw);
  if (!parsed.ok) throw apiError(400, parsed.code, parsed.message);
  return parsed.value;
}
