/**
 * Live status badges (docs/api.md §3.3, §4 `GET /badge/{host}.svg`): `.svg`, `.png` and the Shields endpoint `.json`,
 * drawn now from the latest public check in the store, so a badge turns grey 72 h after its check even when
 * the prebuilt copy in the site folder says otherwise. `/badge/{host}` (the HTML page) comes from the site build.
 *
 * Cache-Control follows the badge: a green badge is never cacheable past the moment it turns grey.
 */
import type { H3 } from 'h3';
import {
  type BadgeCheck,
  badgePathKey,
  badgeState,
  isBadgeHost,
  latestPublicCheck,
  latestPublicChecksByPath,
  shieldsEndpoint,
} from '../../core/badge.ts';
import { parseInput } from '../../core/input-codes.ts';
import { BadgeQuerySchema } from '../../core/request-schemas.ts';
import type { BadgeRenderer } from '../../io/documents/badge-image.ts';
import type { Store } from '../../io/store/port.ts';
import { apiError } from '../errors.ts';
import { serveSite } from '../site.ts';

/** How many of a host's newest public-state receipts are searched for the latest check of an exact path. */
const RECENT_CHECKS = 500;
const BADGE_FILE = /^(.+)\.(svg|png|json)$/;
/** A host's latest check is looked up at most this often; the state is still worked out per request, on time. */
const LOOKUP_TTL_MS = 10_000;
/** How long past its TTL a remembered check may still answer while its refresh runs. */
const STALE_MS = 60_000;
/** The newest receipts of a host read first for its badge (the newest with a verdict is the answer). */
const NEWEST_CHECKS = 8;
const LOOKUPS_KEPT = 10_000;
/** What the path maps of hosts may hold, in characters (about 16 MiB): hundreds of hosts with 500 paths each. */
const PATH_CHARS_KEPT = 8_000_000;

export type BadgeDeps = { store: Store; badges: BadgeRenderer; now: () => Date; siteDir: string };

/** Registers `/badge/{host}.svg|.png|.json`. */
export function badgeRoutes(app: H3, deps: BadgeDeps): void {
  const latest = createLatestCheckLookup(deps);
  app.get('/badge/:file', async (event) => {
    const match = BADGE_FILE.exec(event.context.params?.file ?? '');
    // Not a badge file: the site's HTML page for the host.
    if (match === null) return serveSite(event, deps.siteDir);
    const [, host = '', kind] = match;
    if (!isBadgeHost(host))
      throw apiError(400, 'bad_host', 'Expected a lower-case host name, with a port if any.');
    const query = parseInput(BadgeQuerySchema, {
      path: new URL(event.req.url).searchParams.get('path') ?? undefined,
    });
    if (!query.ok) throw apiError(400, query.code, query.message);
    const path = query.value.path ?? null;
    const state = badgeState(await latest(host, path), deps.now());
    const headers = {
      'cache-control': `public, max-age=${state.max_age_s}`,
      'x-badge-state': state.state,
    };
    if (kind === 'json') return Response.json(shieldsEndpoint(state), { headers });
    if (kind === 'png') {
      return new Response(new Uint8Array(await deps.badges.png(state)), {
        headers: { ...headers, 'content-type': 'image/png' },
      });
    }
    return new Response(await deps.badges.svg(state), {
      headers: { ...headers, 'content-type': 'image/svg+xml; charset=utf-8' },
    });
  });
}

/**
 * The latest public check of a host (or path), remembered for {@link LOOKUP_TTL_MS}: badges are hot links. Past
 * that, for up to {@link STALE_MS} more, the remembered check answers while one lookup refreshes it, so a hot badge
 * never waits for the store; the state is still worked out per request from the check's time, so the 72 h rule
 * holds to the second. A host badge reads the host's newest few receipts first. A path badge reads the host's wider
 * window once, into the latest check of each of its paths, remembered per host: every `?path=` of the host is then
 * a map lookup, so a caller naming a new path on each request costs what a host badge costs, and cannot push the
 * hot badges out of memory.
 */
function createLatestCheckLookup(
  deps: BadgeDeps,
): (host: string, path: string | null) => Promise<BadgeCheck | null> {
  const hosts = createMemo(
    deps.now,
    LOOKUPS_KEPT,
    () => 1,
    async (host: string) => {
      const newest = latestPublicCheck(await deps.store.publicChecksByHost(host, NEWEST_CHECKS), host, null);
      return (
        newest ?? latestPublicCheck(await deps.store.publicChecksByHost(host, RECENT_CHECKS), host, null)
      );
    },
  );
  const paths = createMemo(deps.now, PATH_CHARS_KEPT, pathChars, async (host: string) =>
    latestPublicChecksByPath(await deps.store.publicChecksByHost(host, RECENT_CHECKS), host),
  );
  return async (host, path) =>
    path === null ? hosts(host) : ((await paths(host)).get(badgePathKey(path)) ?? null);
}

/** What a host's path map weighs in memory, in characters (each entry's path plus its check, about 100). */
function pathChars(byPath: Map<string, BadgeCheck>): number {
  let chars = 1;
  for (const path of byPath.keys()) chars += path.length + 100;
  return chars;
}

/**
 * `load(host)` remembered per host with the lookup's TTL and stale window (see {@link createLatestCheckLookup}); the
 * memo is emptied when what it holds would weigh more than `budget`.
 */
function createMemo<T>(
  now: () => Date,
  budget: number,
  weigh: (value: T) => number,
  load: (host: string) => Promise<T>,
): (host: string) => Promise<T> {
  type Memo = { at: number; value: Promise<T>; refreshing: boolean; weight: number };
  const memo = new Map<string, Memo>();
  let held = 0;
  const forget = (key: string, entry: Memo) => {
    if (memo.get(key) !== entry) return;
    memo.delete(key);
    held -= entry.weight;
  };
  const remember = (key: string, at: number, value: Promise<T>) => {
    const previous = memo.get(key);
    if (previous !== undefined) forget(key, previous);
    const entry: Memo = { at, value, refreshing: false, weight: 0 };
    memo.set(key, entry);
    value.then(
      (loaded) => {
        if (memo.get(key) !== entry) return;
        entry.weight = weigh(loaded);
        held += entry.weight;
        if (held > budget) {
          memo.clear();
          held = 0;
          memo.set(key, entry);
          held = entry.weight;
        }
      },
      () => forget(key, entry),
    );
  };
  return (key) => {
    const at = now().getTime();
    const hit = memo.get(key);
    const age = hit === undefined ? Number.POSITIVE_INFINITY : at - hit.at;
    if (hit !== undefined && age >= 0 && age < LOOKUP_TTL_MS) return hit.value;
    if (hit !== undefined && age >= 0 && age < LOOKUP_TTL_MS + STALE_MS) {
      if (!hit.refreshing) {
        hit.refreshing = true;
        const fresh = load(key);
        fresh.then(
          () => remember(key, at, fresh),
          () => {
            hit.refreshing = false;
          },
        );
      }
      return hit.value;
    }
    const value = load(key);
    remember(key, at, value);
    return value;
  };
}
