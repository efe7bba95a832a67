/**
 * The public listings as published files (the crawl's data contract, `docs/data-files.md`): the skip listing page,
 * saves, the bazaar check and the rules document, as `/v1/skips.json`, `/saves.json`, `/bazaar.json` and
 * `/rules.json` serve them, plus the Shields endpoint of a badge. Only the members the site's pages show are
 * required; readers ignore members they do not know, as the contract asks. The site's loaders check the files with
 * these schemas (`site/lib/schemas.ts`) and `/openapi.json` publishes them.
 */
import * as v from 'valibot';

const Iso = v.pipe(v.string(), v.isoTimestamp());
const Verdict = v.picklist(['pay', 'skip', 'recheck']);
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const NullableNumber = v.nullable(v.number());
const NullableString = v.nullable(v.string());

export const SourceEntrySchema = v.looseObject({
  ok: v.boolean(),
  items: Count,
  note: v.string(),
  skipped: v.optional(v.boolean()),
});

export const SkipRecordSchema = v.looseObject({
  id: v.string(),
  url: v.string(),
  claimed_price_usd: v.optional(v.number()),
  quoted_price_usd: v.optional(v.number()),
  pay_to: v.string(),
  verdict: v.string(),
  reason: v.string(),
  reason_code: v.string(),
  timestamp: Iso,
  source_list: v.string(),
  also_listed_in: v.optional(v.array(v.string()), []),
  method: v.picklist(['GET', 'POST']),
  http_status: v.number(),
  network: v.string(),
  listed_network: v.string(),
  listed_pay_to: v.string(),
  permalink: v.string(),
  /** The run that probed a record carried from it (docs/data-files.md "When a source fails"). */
  carried_from: v.optional(v.string()),
});

export const SkipPage = v.looseObject({
  schema: v.literal(1),
  endpoints_covered: Count,
  new_this_week: Count,
  crawled_at: Iso,
  total_receipts: Count,
  pay: Count,
  skip: Count,
  recheck: Count,
  /** Endpoints carried from earlier runs; absent in runs published before it existed. */
  carried: v.optional(Count, 0),
  sources: v.record(v.string(), SourceEntrySchema),
  dedupe: v.string(),
  method: v.string(),
  spot_check: v.string(),
  featured_mismatch: NullableString,
  page_size: Count,
  page: v.pipe(Count, v.minValue(1)),
  pages: v.pipe(Count, v.minValue(1)),
  skips: v.array(SkipRecordSchema),
});

export const SaveEntrySchema = v.looseObject({
  id: v.string(),
  url: v.string(),
  method: v.string(),
  kind: v.picklist(['asked_more', 'other_wallet', 'other_network']),
  reason_code: v.string(),
  reason: v.string(),
  listed_price_usd: NullableNumber,
  quoted_price_usd: NullableNumber,
  listed_pay_to: NullableString,
  pay_to: NullableString,
  listed_network: NullableString,
  network: NullableString,
  source_list: v.string(),
  timestamp: Iso,
  permalink: v.string(),
  /** The run whose receipt this is (the saves list spans the runs of 30 days). */
  run_id: v.optional(v.string()),
  /** The signed receipt, redacted of who asked (docs/data-files.md `saves.json`). */
  receipt: v.optional(v.looseObject({ id: v.string() })),
});
export const Saves = v.looseObject({
  schema: v.literal(1),
  generated_at: Iso,
  window_days: Count,
  since: Iso,
  count: Count,
  saves: v.array(SaveEntrySchema),
});

export const BazaarResultSchema = v.looseObject({
  rank: Count,
  url: v.string(),
  method: v.string(),
  verdict: Verdict,
  reason_code: v.string(),
  reason: v.string(),
  listed_price_usd: NullableNumber,
  quoted_price_usd: NullableNumber,
  timestamp: Iso,
  receipt_id: v.string(),
  permalink: v.string(),
});
export const Bazaar = v.looseObject({
  schema: v.literal(1),
  date: v.string(),
  checked_at: Iso,
  source: v.looseObject({
    url: v.string(),
    query: v.string(),
    top: Count,
    ok: v.boolean(),
    note: v.string(),
  }),
  pay: Count,
  skip: Count,
  recheck: Count,
  results: v.array(BazaarResultSchema),
});

/** The rules document (`core/rules.ts`). Sections the crawl's version adds are optional, so either version reads. */
export const Rules = v.looseObject({
  schema: v.literal(1),
  api_version: v.string(),
  verdict_rules: v.optional(
    v.array(
      v.looseObject({
        order: v.number(),
        reason_codes: v.array(v.string()),
        verdict: Verdict,
        rule: v.string(),
      }),
    ),
  ),
  reasons: v.array(v.looseObject({ code: v.string(), verdict: v.string(), text: v.string() })),
  // Absent from the copies of runs made before it was published.
  supported_networks: v.optional(
    v.array(
      v.looseObject({
        network: v.string(),
        usdc: v.string(),
        name: v.string(),
        version: v.string(),
        decimals: v.number(),
      }),
    ),
  ),
  confidence: v.array(v.looseObject({ confidence: v.string(), rule: v.string() })),
  quality_codes: v.array(v.looseObject({ code: v.string(), text: v.string() })),
  free_trial_headers: v.array(v.looseObject({ header: v.string(), meaning: v.string() })),
  reputation: v.looseObject({
    summary: v.string(),
    // `meaning` in the data contract, `rule` in core/rules.ts: either is shown.
    components: v.array(
      v.looseObject({
        name: v.string(),
        weight: v.number(),
        meaning: v.optional(v.string()),
        rule: v.optional(v.string()),
      }),
    ),
    bands: v.unknown(),
    min_samples: v.optional(v.unknown()),
    min_observations: v.optional(v.unknown()),
  }),
  hosted_bands: v.optional(
    v.array(
      v.looseObject({
        band: v.string(),
        from_check: v.number(),
        to_check: NullableNumber,
        price_atomic: v.string(),
        price_usd: v.number(),
      }),
    ),
  ),
  limits: v.record(v.string(), v.unknown()),
  dedupe: v.optional(v.string()),
  crawl_method: v.optional(v.string()),
  public_state: v.optional(v.array(v.string())),
});

export type SkipPage = v.InferOutput<typeof SkipPage>;
export type Saves = v.InferOutput<typeof Saves>;
export type Bazaar = v.InferOutput<typeof Bazaar>;
export type Rules = v.InferOutput<typeof Rules>;

/** `GET /badge/{host}.json`: a Shields.io endpoint badge (https://shields.io/badges/endpoint-badge). */
export const ShieldsEndpointSchema = v.looseObject({
  schemaVersion: v.literal(1),
  label: v.string(),
  message: v.string(),
  color: v.string(),
  cacheSeconds: v.optional(Count),
});
