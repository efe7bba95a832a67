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

  it('answers a GET of a resume 405, naming POST: resuming changes state', async () => {
    const response = await get(`/v1/watches/wa-${'0'.repeat(32)}/resume`);
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

const W3 = '0x7a11000000000000000000000000000000000003';

/** A watch's signed events as the poll route gives them. */
const eventsOfWatch = async (watch: { id: string; token: string }) =>
  (
    (await (await get(`/v1/watches/${watch.id}/events`, watch.token)).json()) as {
      events: Array<Record<string, unknown> & { id: string; event: string }>;
    }
  ).events;
const statusOf = async (watch: { id: string; token: string }) =>
  ((await (await get(`/v1/watches/${watch.id}`, watch.token)).json()) as { status: string }).status;
const resume = (id: string, token?: string) =>
  appFetch(spot.service, `/v1/watches/${id}/resume`, {
    method: 'POST',
    headers: token === undefined ? {} : { 'x-watch-token': token },
  });

describe('a paused watch', () => {
  it('is resumed by its owner only, sends the undelivered event with its same webhook-id, and is probed again', async () => {
    const flaky = await startSwitchableSeller(W1);
    const hooks = await startReceiver(500);
    try {
      const made = await post(
        { url: flaky.url, webhook_url: hooks.url, events: ['terms_changed'] },
        { 'x-service-key': EXEMPT_SECRET },
      );
      const watch = (await made.json()) as { id: string; token: string };
      // The seller answers the first probe with its first wallet before the test changes it.
      await waitFor(() => flaky.probes.length > 0, { what: 'the baseline probe' });
      flaky.wallet.payTo = W2;
      const first = await waitFor(() => hooks.received[0], { what: 'the first attempt' });
      expect(first.answered).toBe(500);
      // A day of failures later the delivery gives up and the watch is paused.
      offset += 25 * 3_600_000;
      await waitFor(async () => (await statusOf(watch)) === 'paused', { what: 'the watch to pause' });
      expect((await eventsOfWatch(watch)).map((e) => e.event)).toEqual(['watch_paused', 'terms_changed']);

      // Strangers get the one 404, and nothing changes.
      for (const token of [undefined, 'wt_wrong', `${watch.token}x`]) {
        const answer = await resume(watch.id, token);
        expect(answer.status).toBe(404);
        expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('watch_not_found');
      }
      expect((await resume(`wa-${'0'.repeat(32)}`, watch.token)).status).toBe(404);
      expect(await statusOf(watch)).toBe('paused');

      hooks.answer.status = 200;
      const resumed = await resume(watch.id, watch.token);
      expect(resumed.status).toBe(200);
      expect(await resumed.json()).toMatchObject({ id: watch.id, status: 'active', deliveries_requeued: 1 });
      const again = await waitFor(() => hooks.received.find((r) => r.answered === 200), {
        what: 'the undelivered event after the resume',
      });
      expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(again.body).toBe(first.body);

      // Probed again: the next change is told. Each look steps the service's clock, so a probe that read the old
      // wallet just before the switch is not reused past the probe cache's window.
      flaky.wallet.payTo = W3;
      offset += 301_000;
      const next = await waitFor(
        () => {
          offset += 5_000;
          return hooks.received.find(
            (r) => r.answered === 200 && r.headers['webhook-id'] !== again.headers['webhook-id'],
          );
        },
        { what: 'the next change after the resume' },
      );
      expect(JSON.parse(next.body)).toMatchObject({ event: 'terms_changed', after: { pay_to: W3 } });
      // Resuming an active watch changes nothing.
      const twice = await resume(watch.id, watch.token);
      expect(await twice.json()).toMatchObject({ status: 'active', deliveries_requeued: 0 });
    } finally {
      await flaky.close();
      await hooks.close();
    }
  });
});

describe('a watched host that opts out', () => {
  it('is refused for new watches, no longer probed for existing ones (opted_out, with a notice), resumable once it leaves the list', async () => {
    const quiet = await startSwitchableSeller(W1);
    const control = await startSwitchableSeller(W1);
    const list = join(spot.dataDir, 'opt-out.json');
    const host = new URL(quiet.url).host;
    try {
      const made = await post({ url: quiet.url }, { 'x-service-key': EXEMPT_SECRET });
      const watch = (await made.json()) as { id: string; token: string };
      await post({ url: control.url }, { 'x-service-key': EXEMPT_SECRET });
      await waitFor(() => quiet.probes.length > 0 && control.probes.length > 0, {
        what: 'both first probes',
      });

      await writeFile(list, JSON.stringify({ schema: 1, hosts: [host] }));
      const refused = await waitFor(
        async () => {
          const answer = await post({ url: `${quiet.url}?other` }, { 'x-service-key': EXEMPT_SECRET });
          return answer.status === 400 ? ((await answer.json()) as { error: { code: string } }) : null;
        },
        { what: 'a new watch of the listed host refused' },
      );
      expect(refused.error.code).toBe('host_opted_out');
      // Refused before any payment is asked for.
      const unpaid = await post({ url: quiet.url });
      expect(unpaid.status).toBe(400);

      await waitFor(
        async () => {
          offset += 1_200;
          return (await statusOf(watch)) === 'opted_out';
        },
        { what: 'the watch to be opted out' },
      );
      const [notice, ...earlier] = await eventsOfWatch(watch);
      expect(earlier).toEqual([]);
      expect(notice).toMatchObject({ event: 'watch_opted_out', watch_id: watch.id, after: { host } });
      const jwks = (await (await appFetch(spot.service, '/.well-known/jwks.json')).json()) as {
        keys: Array<{ kid: string; x: string }>;
      };
      await verifySignedEvent(JSON.stringify(notice), jwks);
      // The other host is probed three more times; the listed one never again.
      const probed = quiet.probes.length;
      const seen = control.probes.length;
      await waitFor(
        () => {
          offset += 1_200;
          return control.probes.length >= seen + 3;
        },
        { what: 'three more probes of the other host' },
      );
      expect(quiet.probes.length).toBe(probed);
      const blocked = await resume(watch.id, watch.token);
      expect(blocked.status).toBe(409);
      expect(((await blocked.json()) as { error: { code: string } }).error.code).toBe('host_opted_out');

      await writeFile(list, JSON.stringify({ schema: 1, hosts: [] }));
      const back = await waitFor(
        async () => {
          const answer = await resume(watch.id, watch.token);
          return answer.status === 200 ? ((await answer.json()) as { status: string }) : null;
        },
        { what: 'the resume once the host left the list' },
      );
      expect(back.status).toBe('active');
      await waitFor(
        () => {
          offset += 1_200;
          return quiet.probes.length > probed;
        },
        { what: 'a probe of the resumed watch' },
      );
    } finally {
      await writeFile(list, JSON.stringify({ schema: 1, hosts: [] }));
      await quiet.close();
      await control.close();
    }
  });
});

describe('a watch near its end', () => {
  it('gets one signed watch_expiring through the running loop, on the events route and at its webhook, never a second', async () => {
    const near = await startSwitchableSeller(W1);
    const hooks = await startReceiver(200);
    try {
      const made = await post({ url: near.url, webhook_url: hooks.url }, { 'x-service-key': EXEMPT_SECRET });
      expect(made.status).toBe(201);
      const watch = (await made.json()) as { id: string; token: string; expires_at: string };
      const eventsOf = async () =>
        (
          (await (await get(`/v1/watches/${watch.id}/events`, watch.token)).json()) as {
            events: Array<Record<string, unknown>>;
          }
        ).events;
      await waitFor(() => near.probes.length > 0, { what: 'the baseline probe' });
      // Nothing to say while the end is further off than the notice period.
      expect(await eventsOf()).toEqual([]);
      // Step the service's clock to an hour inside the 72-hour notice period; the loop is left to find it.
      const expiresMs = Date.parse(watch.expires_at);
      offset += expiresMs - 71 * 3_600_000 - now().getTime();
      const delivered = await waitFor(() => hooks.received.find((r) => r.answered === 200), {
        what: 'the watch_expiring webhook',
      });
      const jwks = (await (await appFetch(spot.service, '/.well-known/jwks.json')).json()) as {
        keys: Array<{ kid: string; x: string }>;
      };
      const sent = await verifyDelivery(delivered, jwks);
      expect(sent).toMatchObject({
        type: 'watch-event',
        event: 'watch_expiring',
        watch_id: watch.id,
        receipt_id: null,
        after: { expires_at: watch.expires_at },
      });
      expect(delivered.headers['webhook-id']).toBe(sent.id);
      const [polled, ...others] = await eventsOf();
      expect(others).toEqual([]);
      expect(polled).toEqual(sent);
      expect(await verifySignedEvent(JSON.stringify(polled), jwks)).toEqual(sent);

      // Three more probes of the endpoint, each an interval later: none says it again.
      const seen = near.probes.length;
      await waitFor(
        () => {
          offset += 1_200;
          return near.probes.length >= seen + 3;
        },
        { what: 'three more probes of the endpoint' },
      );
      // A second event would be on the poll route: it is recorded with its delivery, in one transaction.
      expect((await eventsOf()).map((e) => e.event)).toEqual(['watch_expiring']);
      expect(hooks.received).toHaveLength(1);
      // Past its end it cannot be resumed.
      offset += 72 * 3_600_000;
      const late = await resume(watch.id, watch.token);
      expect(late.status).toBe(409);
      expect(((await late.json()) as { error: { code: string } }).error.code).toBe('watch_expired');
    } finally {
      await near.close();
      await hooks.close();
    }
  });
});
