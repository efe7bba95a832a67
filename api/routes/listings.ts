/**
 * The public listings as JSON (docs/api.md §4; docs/data-files.md): `/v1/skips.json?page=N`, `/saves.json`, `/bazaar.json`
 * and `/rules.json`. When the site is built they come from the build (the same files the pages were made from, so
 * page and JSON twin agree); without a build, from the published crawl and bazaar runs, and the rules document from
 * the constants the checks use.
 */
import type { H3, H3Event } from 'h3';
import { parseInput } from '../../core/input-codes.ts';
import { SkipsQuerySchema } from '../../core/request-schemas.ts';
import { rulesDocument } from '../../core/rules.ts';
import { type PublishedFile, type RunPaths, readPublishedFile } from '../../io/runs/paths.ts';
import { apiError } from '../errors.ts';

/** Where the published runs are, and the built site's file lookup when there is a site. */
export type ListingsDeps = {
  runs: { crawl: RunPaths; bazaar: RunPaths };
  fromBuild?: (event: H3Event) => Promise<Response | null>;
};

const CACHE = 'public, max-age=300';

/** Registers the listing routes. */
export function listingRoutes(app: H3, deps: ListingsDeps): void {
  const get = (path: string, handler: (event: H3Event) => Promise<unknown> | unknown) =>
    app.get(path, async (event) => (await deps.fromBuild?.(event)) ?? handler(event));
  get('/v1/skips.json', async (event) => {
    const query = parseInput(SkipsQuerySchema, {
      page: new URL(event.req.url).searchParams.get('page') ?? undefined,
    });
    if (!query.ok) throw apiError(400, query.code, query.message);
    const raw = query.value.page ?? '1';
    const file = await readPublishedFile(deps.runs.crawl, `skips/${raw}.json`);
    return served(file, 'page_not_found', `There is no page ${raw} of the skip listing.`);
  });
  get('/saves.json', async () =>
    served(await readPublishedFile(deps.runs.crawl, 'saves.json'), 'no_published_run', noCrawl),
  );
  get('/bazaar.json', async () =>
    served(
      await readPublishedFile(deps.runs.bazaar, 'bazaar.json'),
      'no_bazaar_check',
      'No bazaar check has been published yet (npm run bazaar-check).',
    ),
  );
  get('/rules.json', (event) => {
    event.res.headers.set('cache-control', CACHE);
    return rulesDocument();
  });
}

const noCrawl = 'No crawl has been published yet (npm run crawl).';

function served(file: PublishedFile, missingCode: string, missingMessage: string): Response {
  if (file.kind === 'no_run') {
    const bazaar = missingCode === 'no_bazaar_check';
    throw apiError(404, bazaar ? 'no_bazaar_check' : 'no_published_run', bazaar ? missingMessage : noCrawl);
  }
  if (file.kind === 'no_file') throw apiError(404, missingCode, missingMessage);
  return new Response(file.text, {
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': CACHE },
  });
}
