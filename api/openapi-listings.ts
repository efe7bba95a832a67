/**
 * The public listings and badges in `/openapi.json` (docs/api.md §4 `/v1/skips`, `/bazaar`, `/saves`, `/rules`,
 * `/badge/{host}.svg`): the JSON twins with the schemas of the published files (`core/published-schemas.ts`), the
 * pages the built site serves, and the live badges. All free, no security. Before the first crawl (or bazaar check)
 * is published the JSON twins answer 404 `no_published_run` (`no_bazaar_check`), and before the first site build the
 * pages answer 404 `not_found`: real answers, so they are described.
 */
import { Bazaar, Rules, Saves, ShieldsEndpointSchema, SkipPage } from '../core/published-schemas.ts';
import { BadgeQuerySchema, SkipsQuerySchema } from '../core/request-schemas.ts';
import { codes, type Operation } from './openapi-model.ts';

const NO_CRAWL = `${codes('no_published_run')}: no crawl has been published yet (npm run crawl).`;
const NOT_BUILT = `${codes('not_found')}: the public site is not built yet (npm run build:site), or has no such page.`;

/** A listing's JSON twin and its page. */
function listing(
  path: string,
  name: string,
  summary: string,
  json: Pick<Operation, 'answer' | 'errors' | 'input'>,
): Operation[] {
  return [
    { method: 'get', path: `${path}.json`, operationId: name, summary, ...json },
    {
      method: 'get',
      path,
      operationId: `${name}Page`,
      summary: `${summary} The page of the public site.`,
      ...(json.input ? { input: json.input } : {}),
      media: 'text/html',
      fromSite: true,
      errors: { ...(json.input ? { 400: codes('bad_page') } : {}), 404: NOT_BUILT },
    },
  ];
}

const HOST = {
  name: 'host',
  description: 'The seller host, lower case, with its port if any.',
  pattern: '^(?:[a-z0-9-]+(?:\\.[a-z0-9-]+)*|\\[[0-9a-f:.]+\\])(?::\\d{1,5})?$',
};

/** A badge file: `/badge/{host}.svg`, `.png` or `.json`. */
function badge(extension: 'svg' | 'png' | 'json'): Operation {
  const answer: Pick<Operation, 'answer' | 'media'> =
    extension === 'json'
      ? { answer: ShieldsEndpointSchema }
      : { media: extension === 'svg' ? 'image/svg+xml' : 'image/png' };
  return {
    method: 'get',
    path: `/badge/{host}.${extension}`,
    operationId: `badge${extension[0]?.toUpperCase()}${extension.slice(1)}`,
    summary:
      extension === 'json'
        ? 'The status badge as a Shields.io endpoint (https://img.shields.io/endpoint?url=…).'
        : `The status badge (docs/api.md §3.3) as ${extension.toUpperCase()}: green "pay · stable N days" only when the latest public check is pay and under 72 hours old, else grey.`,
    description:
      'Drawn live from the latest public check of the host (or of `path`); the x-badge-state header names the state.',
    pathParameter: HOST,
    input: BadgeQuerySchema,
    ...answer,
    errors: { 400: codes('bad_host', 'bad_path') },
  };
}

/** The listing and badge operations, in the order of docs/api.md §4. */
export const LISTING_OPERATIONS: readonly Operation[] = [
  ...listing(
    '/v1/skips',
    'skips',
    'Endpoints the weekly crawl would skip, 500 per page (docs/api.md §2.10).',
    {
      input: SkipsQuerySchema,
      answer: SkipPage,
      errors: { 400: codes('bad_page'), 404: `${codes('page_not_found')}: no such page. ${NO_CRAWL}` },
    },
  ),
  ...listing('/bazaar', 'bazaar', 'The daily check of the top bazaar search results.', {
    answer: Bazaar,
    errors: {
      404: `${codes('no_bazaar_check')}: no bazaar check has been published yet (npm run bazaar-check).`,
    },
  }),
  ...listing(
    '/saves',
    'saves',
    'Endpoints of the last 30 days whose live 402 differed from their listing, with redacted receipts.',
    { answer: Saves, errors: { 404: NO_CRAWL } },
  ),
  ...listing(
    '/rules',
    'rules',
    'Every verdict reason code, the supported networks and their USDC, the confidence rules, quality codes and the reputation formula.',
    { answer: Rules, errors: {} },
  ),
  badge('svg'),
  badge('png'),
  badge('json'),
  {
    method: 'get',
    path: '/badge/{host}',
    operationId: 'badgePage',
    summary: "The badge's page: the host's latest check and the snippets to embed the badge.",
    pathParameter: HOST,
    media: 'text/html',
    fromSite: true,
    errors: { 404: NOT_BUILT },
  },
];
