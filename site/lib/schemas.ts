/**
 * Schemas of the published files the site reads (the crawl's data contract, `docs/data-files.md`). Only the
 * members the pages show are required; readers ignore members they do not know, as the contract asks.
 * Files are checked here once, in the loaders, so pages can trust the shapes. The files the API also serves
 * (skips, saves, bazaar, rules) have their schemas in `core/published-schemas.ts`, shared with `/openapi.json`.
 */
import * as v from 'valibot';

import { Saves, SkipPage } from '../../core/published-schemas.ts';

export { Bazaar, Rules, Saves, SkipPage } from '../../core/published-schemas.ts';

const Iso = v.pipe(v.string(), v.isoTimestamp());
const Verdict = v.picklist(['pay', 'skip', 'recheck']);
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const CurrentPointer = v.looseObject({
  schema: v.literal(1),
  run_id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9TZ-]{1,80}$/)),
  path: v.pipe(v.string(), v.regex(/^runs\/[A-Za-z0-9TZ-]{1,80}$/)),
  published_at: Iso,
});

export const RunSummarySchema = v.looseObject({
  run_id: v.string(),
  crawled_at: Iso,
  duration_s: v.number(),
  endpoints_covered: Count,
  new_this_week: Count,
  total_receipts: Count,
  pay: Count,
  skip: Count,
  recheck: Count,
  reasons: v.record(v.string(), Count),
  hosts: Count,
  saves: Count,
});
export const Stats = v.looseObject({ schema: v.literal(1), runs: v.array(RunSummarySchema) });

/** A signed check receipt, as far as its page reads it. */
export const Receipt = v.looseObject({
  id: v.pipe(v.string(), v.regex(/^(?:sc|ps)-[a-z2-7]{26}$/)),
  type: v.string(),
  issued_at: Iso,
  url: v.string(),
  method: v.optional(v.string()),
  verdict: Verdict,
  reason: v.string(),
  kid: v.optional(v.string()),
  signature: v.optional(v.string()),
});

/**
 * A skip page and the saves as the listing pages keep them: each file is checked whole against its contract schema,
 * then only the members the pages show stay (the `receipt` each save carries is for the receipt pages, which read
 * `saves.json` themselves). Astro bundles its data store into the build and parses it again to render, so each
 * member kept costs its size several times over (BENCHMARKS.md at 6d8da5c, §6); the JSON twins are the published
 * files.
 */
export const SkipPageShown = v.pipe(
  SkipPage,
  v.transform((page) => ({
    ...page,
    skips: page.skips.map((s) =>
      pick(s, [
        'id',
        'url',
        'method',
        'reason_code',
        'claimed_price_usd',
        'quoted_price_usd',
        'source_list',
        'timestamp',
        'permalink',
        'carried_from',
      ]),
    ),
  })),
);
export const SavesShown = v.pipe(
  Saves,
  v.transform((saves) => ({
    ...saves,
    saves: saves.saves.map((s) =>
      pick(s, [
        'id',
        'url',
        'method',
        'kind',
        'listed_price_usd',
        'quoted_price_usd',
        'listed_pay_to',
        'pay_to',
        'listed_network',
        'network',
        'timestamp',
        'permalink',
      ]),
    ),
  })),
);
export type SkipPageShown = v.InferOutput<typeof SkipPageShown>;
export type SavesShown = v.InferOutput<typeof SavesShown>;

/** The members `keys` of `from` that are present. */
function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key];
  return out as Pick<T, K>;
}

export type Stats = v.InferOutput<typeof Stats>;
export type Receipt = v.InferOutput<typeof Receipt>;

/** Parses `value` or throws an error naming the file and the first wrong member, so a bad file stops the build. */
export function parseFile<S extends v.GenericSchema>(
  schema: S,
  value: unknown,
  file: string,
): v.InferOutput<S> {
  const parsed = v.safeParse(schema, value);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const where = issue.path?.map((item) => String(item.key)).join('.') ?? '(top)';
  throw new Error(`${file}: ${where}: ${issue.message}`);
}
