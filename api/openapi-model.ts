/**
 * How `/openapi.json` describes one operation (`openapi.ts` turns these into OpenAPI 3.1), and the error texts
 * several operations share. The tables are `openapi-operations.ts` (the products, receipts and keys),
 * `openapi-listings.ts` (listings and badges) and `openapi-hosted.ts` (integrators and invoices).
 */
import type * as v from 'valibot';
import type { OfferName } from './x402/offers.ts';

export type Operation = {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI path template. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Query parameters (GET) or the JSON body (POST). */
  input?: v.GenericSchema;
  pathParameter?: { name: string; description: string; pattern: string };
  /** Required request headers that are not security schemes (a watch's `x-watch-token`). */
  headerParameters?: ReadonlyArray<{ name: string; description: string; pattern: string }>;
  /** The success status when it is not 200 (a created resource: 201). */
  success?: 201;
  /** Optional query parameters that are not the input (a POST's body is its input). */
  queryParameters?: ReadonlyArray<{ name: string; description: string; pattern: string }>;
  /** The JSON answer; absent when the answer is not JSON (`media`). */
  answer?: v.GenericSchema;
  /** Headers the answer may carry besides those of paid and hosted answers, by name, with their description. */
  answerHeaders?: Readonly<Record<string, string>>;
  /** The media type of a non-JSON answer (an image, a page, a PDF). */
  media?: string;
  /** Served from the built site (`npm run build:site`): a 404 may be the site's HTML page for a browser. */
  fromSite?: boolean;
  /** A browser (its `Accept` prefers `text/html`) gets the answer as the site's page (`api/html-pages.ts`). */
  html?: true;
  /** Error statuses and the codes each may carry. */
  errors: Record<number, string>;
  /** What a paid call buys: a fixed-price x402 offer, or an invoice, priced at its own total. */
  offer?: OfferName | 'invoice';
  /** Service keys: `optional` where they are one way in (the check, payment status), `required` where the route
   *  is an integrator's own (docs/api.md §5.4). */
  keys?: 'optional' | 'required';
  /** The route is also free (daily quota) before it answers 402. */
  freeQuota?: boolean;
  /** False for a route that answers without the shared database, so never with `database_unavailable`. */
  needsDatabase?: false;
};

export const JSON_TYPE = 'application/json';
/** The house error body, `{"error":{"code","message"}}`, as a component of the document. */
export const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** Codes as the descriptions list them. */
export const codes = (...list: readonly string[]) => list.map((code) => `\`${code}\``).join(', ');

export const KEY_401 =
  'A bad, suspended or revoked service key; never falls back to a free answer (docs/api.md §5.5).';
export const DATABASE_503 =
  `${codes('database_unavailable')} (only with \`DATABASE_URL\`): the shared database did not answer within 10 s ` +
  'or could not be reached; no payment was taken. Retry after the Retry-After seconds.';
export const PAID_502 = `${codes('facilitator_unavailable', 'settlement_unverified')}: the facilitator did not answer, or its settle answer could not be checked; check payment status before signing again.`;
