/**
 * The delistings of the published crawl run as the server shows them (`GET /v1/receipts/by-url`, docs/api.md):
 * `delisted.json` of the run `current.json` names, read once per run and joined by method and normalized URL
 * (`shownDelistings`, `core/delisting.ts`). The pointer is read again at most every {@link RECHECK_MS}, as often as
 * the server polls it to take a new run in.
 */
import { join } from 'node:path';
import { delistingKey, type ShownDelisting, shownDelistings } from '../../core/delisting.ts';
import type { HttpMethod } from '../../core/model.ts';
import { publishedRunDir, type RunPaths, readJsonRecord, readPointer } from './paths.ts';

const RECHECK_MS = 2000;

/** The published run's delistings. */
export type Delistings = {
  /** The endpoint's delisting the published run still shows; null when it is listed, or was never delisted. */
  of(urlNorm: string, method: HttpMethod): Promise<ShownDelisting | null>;
};

/** Reads the delistings of the crawl runs under `paths`; `now` is the clock in milliseconds. */
export function createDelistings(paths: RunPaths, now: () => number = Date.now): Delistings {
  let runId: string | null = null;
  let shown = new Map<string, ShownDelisting>();
  let checkedAt = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> | null = null;
  const refresh = async () => {
    const pointer = await readPointer(paths);
    checkedAt = now();
    if (pointer === null) {
      runId = null;
      shown = new Map();
      return;
    }
    if (pointer.run_id === runId) return;
    const file = await readJsonRecord(join(publishedRunDir(paths, pointer.run_id), 'delisted.json'));
    shown = shownDelistings(Array.isArray(file?.['delisted']) ? (file['delisted'] as unknown[]) : []);
    runId = pointer.run_id;
  };
  return {
    async of(urlNorm, method) {
      if (now() - checkedAt >= RECHECK_MS) {
        refreshing ??= refresh().finally(() => {
          refreshing = null;
        });
        await refreshing;
      }
      return shown.get(delistingKey(urlNorm, method)) ?? null;
    },
  };
}
