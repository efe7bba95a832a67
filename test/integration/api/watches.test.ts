/**
 * Watches through the service (`app.fetch`, the real prober on loopback, the watcher running with a short
 * WATCH_INTERVAL_S and the service's clock stepped by the test): bad input is a 400 before any 402, the token
 * guards every read, a wallet change arrives signed at a loopback receiver (verified with the JWKS alone), a
 * receiver answering 500 gets the same `webhook-id` once it recovers, and a 410 stops the watch.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishRun } from '../../../io/runs/paths.ts';
import { createIntegrator } from '../../helpers/integrators.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';
import { waitFor } from '../../helpers/wait.ts';
import {
  type Receiver,
  startReceiver,
  startSwitchableSeller,
  verifyDelivery,
  verifySignedEvent,
} from '../../helpers/webhooks.ts';

const W1 = '0x7a11000000000000000000000000000000000001';
const W2 = '0x7a11000000000000000000000000000000000002';

let offset = 0;
const now = () => new Date(Date.now() + offset);
let spot: TestService;
let seller: Awaited<ReturnType<typeof startSwitchableSeller>>;
let receiver: Receiver;

beforeAll(async () => {
  seller = await startSwitchableSeller(W1);
  receiver = await startReceiver(500);
  spot = await startTestService({ WATCH_INTERVAL_S: '1' }, { now, watchTickMs: 50 }, { listen: false });
});
afterAll(async () => {
  await spot?.stop();
  await seller?.close();
  await receiver?.close();
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  appFetch(spot.service, '/v1/watches', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const get = (path: string, token?: string) =>
  appFetch(spot.service, path, token === undefined ? {} : { headers: { 'x-watch-token': token } });

describe('POST /v1/watches input', () => {
  it.each([
    [{ url: 'placeholder', events: ['nope'] }, 'bad_events'],
    [{ url: 'placeholder', events: [] }, 'bad_events'],
    [{ url: 'placeholder', webhook_url: 'ftp://hooks.example/x' }, 'bad_webhook_url'],
    [{ url: 'placeholder', webhook_url: 'https://user:pw@hooks.example/x' }, 'bad_webhook_url'],
    [{ url: 'placeholder', webhook_url: 'http://10.0.0.1/hook' }, 'webhook_url_refused'],
    [{ url: 'http://10.1.2.3/paid' }, 'url_refused'],
    [{ url: 'https://user@seller.example/x' }, 'bad_url'],
    [{}, 'missing_url'],
  ])('refuses %j with 400 %s, with or without a payment, before any 402', async (body, code) => {
    const sent = { ...body, ...('url' in body && body.url === 'placeholder' ? { url: seller.url } : {}) };
    const response = await post(sent);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
  });

  it('answers a GET of the collection 405, naming POST: watches are never listed', async () => {
    const response = await get('/v1/watches');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
  });

  it('asks a caller without a key to pay for a good watch', async () => {
    const response = await post({ url: seller.url });
    expect(response.status).toBe(402);
    expect(response.headers.get('payment-required')).toBeTruthy();
  });
});

describe('a watch with a webhook', () => {
  it('shows nothing to strangers, sends a signed terms_changed, redelivers with the same id, stops on 410', async () => {
    const made = await post(
      { url: seller.url, webhook_url: receiver.url, events: ['terms_changed', 'verdict_changed'] },
      { 'x-service-key': EXEMPT_SECRET },
    );
    expect(made.status).toBe(201);
    const watch = (await made.json()) as { id: string; token: string; status: string; events: string[] };
    expect(watch.status).toBe('active');
    expect(watch.token).toMatch(/^wt_/);

    // A stranger: one 404 whatever is wrong.
    const strangers = await Promise.all([
      get(`/v1/watches/${watch.id}`),
      get(`/v1/watches/${watch.id}`, 'wt_wrong'),
      get(`/v1/watches/wa-${'0'.repeat(32)}`, watch.token),
      get(`/v1/watches/${watch.id}/events`, `${watch.token}x`),
    ]);
    for (const answer of strangers) {
      expect(answer.status).toBe(404);
      expect(await answer.json()).toEqual({
        error: { code: 'watch_not_found', message: 'No watch with this id and token.' },
      });
    }
    const mine = await get(`/v1/watches/${watch.id}`, watch.token);
    expect(mine.status).toBe(200);
    expect(await mine.json()).not.toHaveProperty('token');

    // The baseline probe issues a receipt; the seller then switches wallets.
    await waitFor(
      async () => (await get(`/v1/receipts/by-url?url=${encodeURIComponent(seller.url)}`)).status === 200,
      { what: 'the baseline receipt' },
    );
    seller.wallet.payTo = W2;
    offset += 301_000; // past the probe cache's reuse window
    const first = await waitFor(() => receiver.received[0], { what: 'the first delivery attempt' });
    expect(first.answered).toBe(500);
    receiver.answer.status = 200;
    offset += 3_600_000; // past any backoff
    const ok = await waitFor(() => receiver.received.find((r) => r.answered === 200), {
      what: 'the delivery after the receiver recovers',
    });
    expect(ok.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(ok.body).toBe(first.body);
    const jwks = (await (await appFetch(spot.service, '/.well-known/jwks.json')).json()) as {
      keys: Array<{ kid: string; x: string }>;
    };
    const event = await verifyDelivery(ok, jwks);
    expect(event).toMatchObject({ type: 'watch-event', event: 'terms_changed', watch_id: watch.id });
    expect(String((event.before as { pay_to: string }).pay_to).toLowerCase()).toBe(W1);
    expect(String((event.after as { pay_to: string }).pay_to).toLowerCase()).toBe(W2);
    expect(event.receipt_id).toMatch(/^sc-/);

    const page = (await (await get(`/v1/watches/${watch.id}/events?limit=10`, watch.token)).json()) as {
      events: Array<{ id: string; event: string }>;
    };
    expect(page.events.map((e) => e.event)).toEqual(['terms_changed']);
    expect(page.events[0]?.id).toBe(ok.headers['webhook-id']);

    // 410 Gone stops the watch at once.
    receiver.answer.status = 410;
    seller.wallet.payTo = W1;
    offset += 301_000;
    await waitFor(
      async () =>
        ((await (await get(`/v1/watches/${watch.id}`, watch.token)).json()) as { status: string }).status ===
        'stopped',
      { what: 'the watch to stop after a 410' },
    );
    const notices = (await (await get(`/v1/watches/${watch.id}/events`, watch.token)).json()) as {
      events: Array<{ event: string }>;
    };
    expect(notices.events.map((e) => e.event)).toEqual(['watch_stopped', 'terms_changed', 'terms_changed']);

    const deleted = await appFetch(spot.service, `/v1/watches/${watch.id}`, {
      method: 'DELETE',
      headers: { 'x-watch-token': watch.token },
    });
    expect(deleted.status).toBe(200);
    expect((await get(`/v1/watches/${watch.id}`, watch.token)).status).toBe(404);
  });
});

describe('watches of a hosted integrator', () => {
  it('are listed on /v1/integrators/me for its keys only, never with their tokens', async () => {
    const hosted = spot.service.deps.hosted;
    if (!hosted) throw new Error('hosted mode is not wired');
    const [mine = ''] = await createIntegrator(hosted, 'watcher', '100000000');
    const [theirs = ''] = await createIntegrator(hosted, 'stranger', '100000000');
    const made = await post({ url: `${seller.url}?listed` }, { authorization: `Bearer ${mine}` });
    expect(made.status).toBe(201);
    const watch = (await made.json()) as { id: string; token: string; access: { tier: string } };
    expect(watch.access.tier).toBe('hosted');
    // Billed per watch-month on the invoice, not as a hosted use of the month.
    expect(await hosted.meter.calls('watcher', spot.service.deps.now().toISOString().slice(0, 7))).toBe(0);
    const me = async (key: string) =>
      (await (
        await appFetch(spot.service, '/v1/integrators/me', { headers: { authorization: `Bearer ${key}` } })
      ).json()) as {
        watches: Array<Record<string, unknown>>;
      };
    const listed = (await me(mine)).watches;
    expect(listed.map((w) => w.id)).toEqual([watch.id]);
    expect(listed[0]).toMatchObject({ url: `${seller.url}?listed`, status: 'active' });
    expect(JSON.stringify(listed)).not.toContain(watch.token);
    expect((await me(theirs)).watches).toEqual([]);
  });
});

describe('a crawl run that delists a watched endpoint', () => {
  it('gives each active watch of it a signed delisted event naming the run, and no other watch one', async () => {
    const make = async (url: string) => {
      const made = await post({ url }, { 'x-service-key': EXEMPT_SECRET });
      expect(made.status).toBe(201);
      return (await made.json()) as { id: string; token: string };
    };
    const gone = await make(`${seller.url}?gone`);
    const kept = await make(`${seller.url}?kept`);
    const paths = spot.service.deps.runs.crawl;
    const runId = '20261201T000000Z-d1e5';
    const older = '20261124T000000Z-0a0b';
    const entry = (url: string, inRun: string) => ({
      event: 'delisted',
      url,
      url_norm: url,
      method: 'GET',
      host: '127.0.0.1',
      source_list: 'bazaar',
      also_listed_in: [],
      last_run_id: older,
      last_probed_at: '2026-11-24T00:00:00.000Z',
      last_verdict: 'pay',
      delisted_in_run: inRun,
      delisted_at: '2026-12-01T00:10:00.000Z',
    });
    const work = join(paths.work, runId);
    await mkdir(work, { recursive: true });
    await writeFile(join(work, 'receipts.ndjson'), '');
    await writeFile(join(work, 'listings.json'), '[]');
    // The file also shows an older run's delisting of the kept watch's URL: reported then, never again.
    const delisted = [entry(`${seller.url}?gone`, runId), entry(`${seller.url}?kept`, older)];
    await writeFile(join(work, 'delisted.json'), JSON.stringify({ schema: 1, run_id: runId, delisted }));
    await publishRun(paths, runId, now());
    await spot.service.takeInRuns();

    const eventsOf = async (watch: { id: string; token: string }) =>
      (
        (await (await get(`/v1/watches/${watch.id}/events`, watch.token)).json()) as {
          events: Array<Record<string, unknown>>;
        }
      ).events;
    const [event, ...rest] = await eventsOf(gone);
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      event: 'delisted',
      watch_id: gone.id,
      url: `${seller.url}?gone`,
      after: { run_id: runId, source_list: 'bazaar' },
    });
    const jwks = (await (await appFetch(spot.service, '/.well-known/jwks.json')).json()) as {
      keys: Array<{ kid: string; x: string }>;
    };
    // The poll route's event is the signed text itself: it verifies with the JWKS alone.
    expect(await verifySignedEvent(JSON.stringify(event), jwks)).toEqual(event);
    expect(await eventsOf(kept)).toEqual([]);
  });
});

describe('an endpoint that goes down and comes back', () => {
  it('sends down after 3 failed probes (never before) and recovered on the first good one, stepping the clock', async () => {
    const flaky = await startSwitchableSeller(W1);
    const hooks = await startReceiver(200);
    try {
      const made = await post(
        { url: flaky.url, webhook_url: hooks.url, events: ['down', 'recovered'] },
        { 'x-service-key': EXEMPT_SECRET },
      );
      const watch = (await made.json()) as { id: string; token: string };
      const eventsOf = async () =>
        (
          (await (await get(`/v1/watches/${watch.id}/events`, watch.token)).json()) as {
            events: Array<{ event: string; after: Record<string, unknown> | null }>;
          }
        ).events;
      await waitFor(
        async () => (await get(`/v1/receipts/by-url?url=${encodeURIComponent(flaky.url)}`)).status === 200,
        { what: 'the baseline receipt of the flaky seller' },
      );
      // Each look steps the service's clock past an interval, so the loop probes again at once.
      flaky.health.down = true;
      const step = () => {
        offset += 1_200;
      };
      const down = await waitFor(
        async () => {
          step();
          return (await eventsOf()).find((e) => e.event === 'down');
        },
        { what: 'the down event' },
      );
      expect(down.after).toMatchObject({ failures: 3 });
      const delivered = await waitFor(() => hooks.received.find((r) => r.answered === 200), {
        what: 'the down webhook',
      });
      expect(JSON.parse(delivered.body)).toMatchObject({ event: 'down', watch_id: watch.id });
      // Still down: no second down event, however many more probes fail.
      for (let i = 0; i < 3; i++) {
        step();
        await spot.service.watcher.probeDue();
      }
      expect((await eventsOf()).filter((e) => e.event === 'down')).toHaveLength(1);

      flaky.health.down = false;
      const recovered = await waitFor(
        async () => {
          step();
          return (await eventsOf()).find((e) => e.event === 'recovered');
        },
        { what: 'the recovered event' },
      );
      expect(recovered.after).toMatchObject({ verdict: expect.any(String) });
      expect((await eventsOf()).map((e) => e.event)).toEqual(['recovered', 'down']);
      await waitFor(() => hooks.received.filter((r) => r.answered === 200).length === 2, {
        what: 'the recovered webhook',
      });
    } finally {
      await flaky.close();
      await hooks.close();
    }
  });
});
