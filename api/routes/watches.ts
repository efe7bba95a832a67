/**
 * Watches (docs/api.md "Watches"): `POST /v1/watches` makes one, bought through x402 for a period
 * (`ACCESS_POLICIES.watch`, `WATCH_LIMITS`) or made with an exempt key or a hosted key (billed per watch-month on
 * the integrator's invoice, not as a hosted use); the answer shows the management
 * token once. `GET`/`DELETE /v1/watches/{id}` and `GET /v1/watches/{id}/events` need that token
 * (`x-watch-token`), as does `POST /v1/watches/{id}/resume` (a paused, stopped or opted-out watch made active again,
 * its undelivered events sent with their same ids); anyone without it gets the same 404 whether or not the watch
 * exists. Bad input, a URL or webhook URL the SSRF gate refuses, and a watched host on the opt-out list are a 400
 * before any payment is asked for or taken.
 */
import type { H3, H3Event } from 'h3';
import { parseInput } from '../../core/input-codes.ts';
import { WATCH_LIMITS } from '../../core/limits.ts';
import { WATCH_EVENT_TYPES } from '../../core/watch-events.ts';
import { type WatchInput, WatchInputSchema } from '../../core/watch-input.ts';
import { WatchEventsQuerySchema } from '../../core/watch-schemas.ts';
import type { WatchOwner, WatchRow } from '../../io/watches/port.ts';
import { presentedAsker } from '../access.ts';
import { answerMetered, type Grant } from '../access-meter.ts';
import { ACCESS_POLICIES } from '../access-policies.ts';
import { readJsonObject } from '../body.ts';
import type { PaidAccess } from '../check.ts';
import type { AppDeps } from '../deps.ts';
import { apiError, errorResponse } from '../errors.ts';
import { queryOf } from '../query.ts';
import { newWatchId } from '../watch-events.ts';
import { endpointOptedOut } from '../watch-opt-out.ts';
import { newWatchToken, tokenMatches, WATCH_TOKEN_HEADER } from '../watch-tokens.ts';

const PATH = '/v1/watches';

/** Registers the watch routes; without a watch store (`deps.watches`) none is served. */
export function watchRoutes(app: H3, deps: AppDeps): void {
  const watches = deps.watches;
  if (!watches) return;
  app.post(PATH, async (event) => {
    // A key that is presented and not good is a 401 before anything, bad input included (CONTRIBUTING.md).
    presentedAsker(event.req.headers, deps.gate, deps.hosted, true);
    const input = await checkedInput(deps, await readJsonObject(event));
    return answerMetered(event, deps, ACCESS_POLICIES.watch, {
      input: () => ({ ok: true, value: input }),
      answer: async (value, grant) => {
        event.res.status = 201;
        return { body: await create(deps, value, ownerOf(grant)), receiptId: null };
      },
      sell: async (value) => ({
        status: 201,
        complete: (access: PaidAccess) => create(deps, value, { kind: 'paid', tx: access.tx }),
      }),
    });
  });
  // Watches are not listed: a GET of the collection says how to make one (an integrator lists its own on
  // /v1/integrators/me).
  app.get(PATH, () =>
    errorResponse(405, 'method_not_allowed', 'Make a watch with POST; read one with GET /v1/watches/{id}.', {
      allow: 'POST',
    }),
  );
  app.get(`${PATH}/:id`, async (event) => watchView(deps, await owned(event, deps)));
  app.delete(`${PATH}/:id`, async (event) => {
    const watch = await owned(event, deps);
    await watches.store.setStatus(watch.id, 'deleted', deps.now().getTime());
    return { id: watch.id, status: 'deleted' };
  });
  app.get(`${PATH}/:id/resume`, () =>
    errorResponse(405, 'method_not_allowed', 'Resume a watch with POST and its x-watch-token.', {
      allow: 'POST',
    }),
  );
  app.post(`${PATH}/:id/resume`, async (event) => {
    const watch = await owned(event, deps);
    const nowMs = deps.now().getTime();
    await resumable(deps, watch, nowMs);
    const requeued = await watches.store.resume(watch.id, nowMs);
    const resumed = (await watches.store.watch(watch.id)) ?? watch;
    return { ...watchView(deps, resumed), deliveries_requeued: requeued };
  });
  app.get(`${PATH}/:id/events`, async (event) => {
    const watch = await owned(event, deps);
    const { limit, before } = pageOf(queryOf(event));
    const rows = await watches.store.events(watch.id, { beforeSeq: before, limit });
    const last = rows.at(-1);
    return {
      watch_id: watch.id,
      events: rows.map((r) => JSON.parse(r.body) as unknown),
      next: rows.length === limit && last ? String(last.seq) : null,
    };
  });
}

/**
 * Why a watch that is not active may not be made active again: it ran out its period, or its host is on the
 * opt-out list (a 409 that says so); nothing when it may.
 */
async function resumable(deps: AppDeps, watch: WatchRow, nowMs: number): Promise<void> {
  if (watch.expiresAtMs <= nowMs) {
    throw apiError(409, 'watch_expired', 'This watch ran out its period; make a new one.');
  }
  if (watch.status !== 'active' && (await optedOut(deps, watch.url))) {
    throw apiError(
      409,
      'host_opted_out',
      'The host of this endpoint asked not to be probed; it cannot be watched.',
    );
  }
}

/** Whether the host of `url` is on the opt-out list as it stands (the last list read whole). */
async function optedOut(deps: AppDeps, url: string): Promise<boolean> {
  const source = deps.watches?.optOut;
  return source !== undefined && endpointOptedOut(url, (await source.read()).list);
}

/**
 * The input, with both URLs through the SSRF gate (DNS included) and the watched host off the opt-out list; a 400
 * before anything is metered or sold.
 */
async function checkedInput(deps: AppDeps, raw: unknown): Promise<WatchInput> {
  const parsed = parseInput(WatchInputSchema, raw);
  if (!parsed.ok) throw apiError(400, parsed.code, parsed.message);
  if (await optedOut(deps, parsed.value.url.url)) {
    throw apiError(
      400,
      'host_opted_out',
      'The host of this endpoint asked not to be probed; it cannot be watched.',
    );
  }
  const gate = deps.watches?.poster.gate;
  if (!gate) throw new Error('[spotcheck] [watches] no gate');
  const target = await gate(parsed.value.url.url);
  if (target !== null) throw apiError(400, 'url_refused', `The watched URL is refused (${target}).`);
  const hook = parsed.value.webhook_url;
  if (hook !== undefined && hook !== null) {
    const refused = await gate(hook);
    if (refused !== null) {
      throw apiError(400, 'webhook_url_refused', `The webhook URL is refused (${refused}).`);
    }
  }
  return parsed.value;
}

/**
 * Who an unpaid metered watch is for: the exempt key's name, or the integrator and key of a hosted one (billed per
 * watch-month on its invoice, `WatchStore.watchMonths`; the policy's `hostedBilling`).
 */
function ownerOf(grant: Grant): WatchOwner {
  if (grant.tier === 'exempt') return { kind: 'exempt', name: grant.key.name };
  if (grant.tier === 'hosted')
    return { kind: 'hosted', integrator: grant.caller.integrator.id, keyId: grant.caller.key.id };
  throw new Error('[spotcheck] [watches] an unpaid metered watch with no exempt or integrator key');
}

/** Stores the watch (durable before the answer leaves) and answers with its token, shown this once. */
async function create(deps: AppDeps, input: WatchInput, owner: WatchOwner) {
  const now = deps.now();
  const { token, hash } = newWatchToken(deps.random);
  const row: WatchRow = {
    id: newWatchId('wa-', deps.random),
    tokenHash: hash,
    url: input.url.url,
    urlNorm: input.url.normalized,
    method: input.method ?? 'GET',
    payTo: input.pay_to ?? null,
    network: input.network ?? null,
    claimedPrice: input.claimed_price ?? null,
    webhookUrl: input.webhook_url ?? null,
    events: input.events ? [...new Set(input.events)] : [...WATCH_EVENT_TYPES],
    owner,
    createdAt: now.toISOString(),
    expiresAtMs: now.getTime() + WATCH_LIMITS.periodDays * 86_400_000,
    status: 'active',
    expiringSent: false,
  };
  await deps.watches?.store.createWatch(row, now.getTime());
  return { ...watchView(deps, row), token };
}

/** The watch named in the path when the request presents its token; else the one 404. */
async function owned(event: H3Event, deps: AppDeps): Promise<WatchRow> {
  const id = event.context.params?.['id'] ?? '';
  const watch = /^wa-[0-9a-f]{32}$/.test(id) ? await deps.watches?.store.watch(id) : null;
  const presented = event.req.headers.get(WATCH_TOKEN_HEADER);
  // Hash and compare even when there is no such watch, so the answer's time says nothing either.
  const matches = tokenMatches(presented, watch?.tokenHash ?? '0'.repeat(64));
  if (!watch || !matches || watch.status === 'deleted') {
    throw apiError(404, 'watch_not_found', 'No watch with this id and token.');
  }
  event.res.headers.set('cache-control', 'private, no-store');
  return watch;
}

/** A watch as its owner sees it (`WatchAnswerSchema`; also listed on `/v1/integrators/me`), never its token. */
export function watchView(deps: Pick<AppDeps, 'watches' | 'baseUrl'>, w: WatchRow) {
  return {
    id: w.id,
    url: w.url,
    method: w.method,
    pay_to: w.payTo,
    network: w.network,
    claimed_price: w.claimedPrice,
    webhook_url: w.webhookUrl,
    events: w.events,
    status: w.status,
    created_at: w.createdAt,
    expires_at: new Date(w.expiresAtMs).toISOString(),
    interval_s: deps.watches?.intervalSeconds ?? WATCH_LIMITS.intervalSeconds,
    events_url: `${deps.baseUrl}${PATH}/${w.id}/events`,
  };
}

/** The page asked for: `limit` (default 50) and the `before` cursor, parsed with the schema `/openapi.json` publishes. */
function pageOf(query: Record<string, unknown>): { limit: number; before: number | null } {
  const parsed = parseInput(WatchEventsQuerySchema, query);
  if (!parsed.ok) throw apiError(400, parsed.code, parsed.message);
  return { limit: parsed.value.limit ?? 50, before: parsed.value.before ?? null };
}
