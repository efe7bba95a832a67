import { describe, expect, it } from 'vitest';
import { registrableDomain } from '../../../crawl/registrable-domain.ts';
import { type HostJob, runPerHost } from '../../../crawl/scheduler.ts';

/** A fake clock and timers: work "takes" a latency per host, advanced by hand, so nothing depends on real time. */
function simulation(latency: (host: string) => number) {
  let now = 0;
  const pending: Array<{ at: number; resolve: () => void }> = [];
  const inFlight = new Map<string, number>();
  const maxPerHost = new Map<string, number>();
  let total = 0;
  let maxTotal = 0;
  const started: string[] = [];
  /** Requests in flight right after each start, with the time of the start. */
  const load: Array<{ at: number; inFlight: number }> = [];
  const work = (item: { host: string; id: number }) => {
    started.push(`${item.host}#${item.id}`);
    const n = (inFlight.get(item.host) ?? 0) + 1;
    inFlight.set(item.host, n);
    maxPerHost.set(item.host, Math.max(maxPerHost.get(item.host) ?? 0, n));
    total++;
    maxTotal = Math.max(maxTotal, total);
    load.push({ at: now, inFlight: total });
    return new Promise<void>((resolve) => {
      pending.push({
        at: now + latency(item.host),
        resolve: () => {
          inFlight.set(item.host, (inFlight.get(item.host) ?? 1) - 1);
          total--;
          resolve();
        },
      });
    });
  };
  /** Completes work in time order until `done` settles; returns the simulated wall time. */
  const drive = async (done: Promise<void>) => {
    let finished = false;
    done.then(() => {
      finished = true;
    });
    for (let guard = 0; guard < 1_000_000 && !finished; guard++) {
      await Promise.resolve();
      await Promise.resolve();
      if (pending.length === 0) continue;
      pending.sort((a, b) => a.at - b.at);
      const next = pending.shift()!;
      now = next.at;
      next.resolve();
    }
    await done;
    return now;
  };
  return { work, drive, now: () => now, maxPerHost, maxTotal: () => maxTotal, started, load };
}

function jobs(perHost: Record<string, number>): HostJob<{ host: string; id: number }>[] {
  return Object.entries(perHost).flatMap(([host, n]) =>
    Array.from({ length: n }, (_, id) => ({ host, item: { host, id } })),
  );
}

/** Six jobs on one host (1 at a time, concurrency 4) that release it after 10 ms and end `tail` ms later. */
async function releasing(tail: number) {
  let now = 0;
  const timers: Array<{ at: number; run: () => void }> = [];
  const after = (ms: number) => new Promise<void>((resolve) => timers.push({ at: now + ms, run: resolve }));
  const counts = { talking: 0, mostTalking: 0, running: 0, mostRunning: 0 };
  const work = async (_item: { host: string; id: number }, released: () => void) => {
    counts.mostTalking = Math.max(counts.mostTalking, ++counts.talking);
    counts.mostRunning = Math.max(counts.mostRunning, ++counts.running);
    await after(10);
    counts.talking--;
    released();
    released(); // a second call changes nothing
    await after(tail);
    counts.running--;
  };
  const done = runPerHost(jobs({ a: 6 }), work, { perHost: 1, concurrency: 4, now: () => now });
  let finished = false;
  void done.then(() => {
    finished = true;
  });
  for (let guard = 0; guard < 1000 && !finished; guard++) {
    for (let i = 0; i < 5; i++) await Promise.resolve();
    timers.sort((x, y) => x.at - y.at);
    const next = timers.shift();
    if (next === undefined) continue;
    now = next.at;
    next.run();
  }
  await done;
  return { wall: now, mostTalking: counts.mostTalking, mostRunning: counts.mostRunning };
}

describe('runPerHost', () => {
  it('pauses a host that asked to be left alone (later) and runs its item again after the pause, others going on', async () => {
    let now = 0;
    const timers: Array<{ at: number; run: () => void }> = [];
    const after = (ms: number, run: () => void) => void timers.push({ at: now + ms, run });
    const log: string[] = [];
    let asked = false;
    const work = async (
      item: { host: string; id: number },
      released: () => void,
      later: (ms: number) => void,
    ) => {
      log.push(`${now} ${item.host}#${item.id}`);
      if (item.host === 'limited' && item.id === 0 && !asked) {
        asked = true;
        later(1000);
        return;
      }
      await new Promise<void>((resolve) => timers.push({ at: now + 10, run: resolve }));
      released();
    };
    const done = runPerHost(jobs({ limited: 2, other: 3 }), work, {
      perHost: 1,
      concurrency: 4,
      now: () => now,
      after,
    });
    let finished = false;
    void done.then(() => {
      finished = true;
    });
    for (let guard = 0; guard < 1000 && !finished; guard++) {
      for (let i = 0; i < 5; i++) await Promise.resolve();
      timers.sort((x, y) => x.at - y.at);
      const next = timers.shift();
      if (next === undefined) continue;
      now = next.at;
      next.run();
    }
    await done;
    // `limited` starts nothing during its pause; its first item runs again once the pause is over.
    const limited = log.filter((line) => line.includes('limited'));
    expect(limited).toEqual(['0 limited#0', '1000 limited#1', '1010 limited#0']);
    expect(log.filter((line) => line.includes('other'))).toEqual(['0 other#0', '10 other#1', '20 other#2']);
  });

  it('runs every job once, never more than 3 per host or the global limit in flight', async () => {
    const sim = simulation(() => 10);
    const all = jobs({ a: 20, b: 7, c: 1, d: 12 });
    await sim.drive(runPerHost(all, sim.work, { perHost: 3, concurrency: 8, now: sim.now }));
    expect(new Set(sim.started).size).toBe(all.length);
    expect(sim.started).toHaveLength(all.length);
    expect(Math.max(...sim.maxPerHost.values())).toBe(3);
    expect(sim.maxTotal()).toBe(8);
  });

  it('with enough global slots, finishes at the slowest host bound: ceil(n/3) rounds of its latency', async () => {
    const latency: Record<string, number> = { slow: 100, mid: 40, fast: 5 };
    const sim = simulation((host) => latency[host] ?? 0);
    const wall = await sim.drive(
      runPerHost(jobs({ slow: 10, mid: 30, fast: 90 }), sim.work, {
        perHost: 3,
        concurrency: 9,
        now: sim.now,
      }),
    );
    expect(wall).toBe(Math.max(Math.ceil(10 / 3) * 100, Math.ceil(30 / 3) * 40, Math.ceil(90 / 3) * 5));
  });

  it('gives a scarce slot to the host with the most work left', async () => {
    const sim = simulation(() => 10);
    await sim.drive(
      runPerHost(jobs({ small: 2, big: 9 }), sim.work, { perHost: 3, concurrency: 3, now: sim.now }),
    );
    expect(sim.started.slice(0, 3)).toEqual(['big#0', 'big#1', 'big#2']);
  });

  it('starts one request on every host before a second when slots are scarce and latencies unknown', async () => {
    const sim = simulation(() => 10);
    await sim.drive(
      runPerHost(jobs({ a: 6, b: 6, c: 6 }), sim.work, { perHost: 3, concurrency: 3, now: sim.now }),
    );
    expect(sim.started.slice(0, 3)).toEqual(['a#0', 'b#0', 'c#0']);
  });

  it('paces hosts with time to spare once the slow host is measured, and still finishes at its bound', async () => {
    // One host of 30 requests at 100 ms bounds the run at 10 rounds (1,000 ms); 50 hosts of 60 requests at 20 ms
    // need 400 ms each with all 3 slots, so they can share fewer slots and still finish in time.
    const fast = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`fast${i}`, 60]));
    const sim = simulation((host) => (host === 'slow' ? 100 : 20));
    const ceiling = 3 * 51;
    const wall = await sim.drive(
      runPerHost(jobs({ slow: 30, ...fast }), sim.work, { perHost: 3, concurrency: ceiling, now: sim.now }),
    );
    expect(wall).toBe(1000);
    expect(sim.maxTotal()).toBe(ceiling); // nothing is known at the start: every host gets its 3
    const paced = sim.load.filter((start) => start.at >= 200);
    expect(paced.length).toBeGreaterThan(1000);
    // Little's law after the first slow answer: 1.2 × (50 × 45 × 20 + 27 × 100) / 900 ≈ 64 with the slow host's 3,
    // rising near the end as the fast hosts' time left reaches the slow host's: under half the ceiling throughout.
    expect(Math.max(...paced.map((start) => start.inFlight))).toBeLessThan(ceiling / 2);
  });

  it('never paces a fleet of equal hosts: every host is on the critical path', async () => {
    const equal = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`host${i}`, 30]));
    const sim = simulation(() => 20);
    const wall = await sim.drive(
      runPerHost(jobs(equal), sim.work, { perHost: 3, concurrency: 120, now: sim.now }),
    );
    expect(wall).toBe(10 * 20);
    expect(sim.load.filter((start) => start.at >= 100).every((start) => start.inFlight === 120)).toBe(true);
  });

  it('starts the dominant host first and keeps its 3 slots busy to the end while small hosts fill the rest', async () => {
    // The public catalogs' shape: one host holds 72 % of the listings (listed last here, so order is by work, not
    // by input), the rest sit on 300 heavy-tailed small hosts, one of them slow (timeouts), with scarce global slots.
    const small: Record<string, number> = {};
    const latency: Record<string, number> = { dominant: 10, slow: 1500 };
    for (let k = 0; k < 300; k++) {
      small[`small${k}`] = Math.max(1, Math.round(60 / (k + 1)));
      latency[`small${k}`] = 5 + ((k * 37) % 60);
    }
    const smallJobs = Object.values(small).reduce((a, b) => a + b, 0) + 3;
    const dominantJobs = Math.round((smallJobs * 72) / 28);
    const sim = simulation((host) => latency[host] ?? 0);
    const dominantStarts: number[] = [];
    const work = (item: { host: string; id: number }) => {
      if (item.host === 'dominant') dominantStarts.push(sim.now());
      return sim.work(item);
    };
    const wall = await sim.drive(
      runPerHost(jobs({ ...small, slow: 3, dominant: dominantJobs }), work, {
        perHost: 3,
        concurrency: 24,
        now: sim.now,
      }),
    );
    const bound = Math.ceil(dominantJobs / 3) * 10;
    expect(sim.started.slice(0, 3)).toEqual(['dominant#0', 'dominant#1', 'dominant#2']);
    // Never idle: its i-th request starts the moment its (i-3)-th is answered.
    expect(dominantStarts).toEqual(dominantStarts.map((_, i) => Math.floor(i / 3) * 10));
    expect(sim.started).toHaveLength(dominantJobs + smallJobs);
    expect(wall).toBe(bound);
  });

  it('with the default ceiling (3 per host), holds a catalog to a few dozen in flight and still meets the dominant bound', async () => {
    // The crawl's default ceiling is 3 per host, up to 2,048: on a catalog of thousands of small hosts, a first burst
    // of one request on each was the crawl's peak of memory, while their work needs only a few slots by Little's law.
    const small: Record<string, number> = {};
    const latency: Record<string, number> = { dominant: 10 };
    for (let k = 0; k < 600; k++) {
      small[`small${k}`] = Math.max(1, Math.round(200 / (k + 1)));
      latency[`small${k}`] = k % 50 === 49 ? 1500 : 5 + ((k * 37) % 60);
    }
    const smallJobs = Object.values(small).reduce((a, b) => a + b, 0);
    const dominantJobs = Math.round((smallJobs * 72) / 28);
    const sim = simulation((host) => latency[host] ?? 0);
    const dominantStarts: number[] = [];
    const work = (item: { host: string; id: number }) => {
      if (item.host === 'dominant') dominantStarts.push(sim.now());
      return sim.work(item);
    };
    const ceiling = 3 * 601;
    const wall = await sim.drive(
      runPerHost(jobs({ ...small, dominant: dominantJobs }), work, {
        perHost: 3,
        concurrency: ceiling,
        now: sim.now,
      }),
    );
    expect(sim.started.slice(0, 3)).toEqual(['dominant#0', 'dominant#1', 'dominant#2']);
    expect(dominantStarts).toEqual(dominantStarts.map((_, i) => Math.floor(i / 3) * 10));
    expect(sim.started).toHaveLength(dominantJobs + smallJobs);
    expect(wall).toBe(Math.ceil(dominantJobs / 3) * 10);
    // Every small host was measured within the first tenth of the run, a hundred or so at a time, not 600 at once.
    expect(sim.maxTotal()).toBeLessThan(ceiling / 10);
    const firsts = new Map<string, number>();
    for (const [i, key] of sim.started.entries()) {
      const host = key.slice(0, key.indexOf('#'));
      if (!firsts.has(host)) firsts.set(host, sim.load[i]?.at ?? 0);
    }
    expect(Math.max(...firsts.values())).toBeLessThan(wall / 10);
  });

  it('refills a freed slot of the dominant host in the same call, without waiting for a later dispatch', async () => {
    const started: string[] = [];
    const releases = new Map<string, () => void>();
    const ends: Array<() => void> = [];
    const deferred: Array<() => void> = [];
    const done = runPerHost(
      jobs({ small: 2, dominant: 8 }),
      (item, released) => {
        started.push(`${item.host}#${item.id}`);
        releases.set(`${item.host}#${item.id}`, released);
        return new Promise<void>((resolve) => ends.push(resolve));
      },
      // A burst of 3: the rest of the first dispatch waits for `defer`, which this test never calls back.
      { perHost: 3, concurrency: 16, now: () => 0, burst: 3, defer: (run) => deferred.push(run) },
    );
    // Listed last, the dominant host (the most work left) still starts first, all three of its slots.
    expect(started).toEqual(['dominant#0', 'dominant#1', 'dominant#2']);
    expect(deferred).toHaveLength(1);
    // Its answer frees a slot: the next request starts before `released` returns, not at the deferred dispatch.
    releases.get('dominant#1')?.();
    expect(started.at(-1)).toBe('dominant#3');
    releases.get('dominant#3')?.();
    expect(started.at(-1)).toBe('dominant#4');
    while (deferred.length > 0) deferred.shift()?.();
    for (let turn = 0; turn < 20 && started.length < 10; turn++) {
      for (const release of releases.values()) release();
      for (const end of ends.splice(0)) end();
      await Promise.resolve();
    }
    for (const end of ends.splice(0)) end();
    await done;
    expect(started).toHaveLength(10);
  });

  it("prepares the dominant host's next jobs in its queue order, at most `prepareAhead` ahead, before they start", async () => {
    const small: Record<string, number> = {};
    const latency: Record<string, number> = { dominant: 10 };
    for (let k = 0; k < 40; k++) {
      small[`small${k}`] = Math.max(1, Math.round(30 / (k + 1)));
      latency[`small${k}`] = 5 + ((k * 37) % 60);
    }
    const sim = simulation((host) => latency[host] ?? 0);
    const prepared: string[] = [];
    const startedPrepared: string[] = [];
    let mostWaiting = 0;
    const work = (item: { host: string; id: number }) => {
      const name = `${item.host}#${item.id}`;
      if (prepared.includes(name)) startedPrepared.push(name);
      mostWaiting = Math.max(mostWaiting, prepared.length - startedPrepared.length);
      return sim.work(item);
    };
    const wall = await sim.drive(
      runPerHost(jobs({ ...small, dominant: 300 }), work, {
        perHost: 3,
        concurrency: 24,
        now: sim.now,
        prepareAhead: 6,
        prepare: (item) => prepared.push(`${item.host}#${item.id}`),
      }),
    );
    // Every job of the dominant host but its first was prepared, in order, and started after it was.
    expect(prepared).toEqual(Array.from({ length: 299 }, (_, i) => `dominant#${i + 1}`));
    expect(startedPrepared).toEqual(prepared);
    expect(mostWaiting).toBeLessThanOrEqual(6);
    expect(mostWaiting).toBeGreaterThan(3);
    expect(wall).toBe(100 * 10);
  });

  it('leaves at most `prepareAhead` items prepared and not started when a job fails', async () => {
    const prepared = new Set<number>();
    const started = new Set<number>();
    const failing = runPerHost(
      jobs({ a: 50, b: 2 }),
      async (item) => {
        started.add(item.id);
        if (item.host === 'a' && item.id === 4) throw new Error('bug');
      },
      { perHost: 3, concurrency: 8, now: () => 0, prepareAhead: 5, prepare: (item) => prepared.add(item.id) },
    );
    await expect(failing).rejects.toThrow('bug');
    expect([...prepared].filter((id) => !started.has(id)).length).toBeLessThanOrEqual(5);
  });

  it('frees a host for its next request once a job is released, while the job goes on', async () => {
    // Six jobs on one host, one request at a time: each talks to the host for 10 ms, then works 25 ms more.
    const run = await releasing(25);
    expect(run.mostTalking).toBe(1);
    expect(run.wall).toBe(6 * 10 + 25); // held until each job ended, it would take 6 × 35 ms
    expect(run.mostRunning).toBe(4);
  });

  it('keeps at most `concurrency` jobs running past their requests', async () => {
    // With 100 ms of work after each 10 ms request, four released jobs fill the bound (concurrency 4) at 40 ms: the
    // fifth request waits for the first job to end (110 ms), the sixth for the second (120 ms); unbounded, 160 ms.
    const run = await releasing(100);
    expect(run.mostTalking).toBe(1);
    expect(run.mostRunning).toBe(4);
    expect(run.wall).toBe(120 + 10 + 100);
  });

  it('starts at most `burst` jobs at once and the rest when `defer` calls back', async () => {
    const deferred: Array<() => void> = [];
    const started: number[] = [];
    const done = runPerHost(
      jobs({ a: 3, b: 3, c: 3 }),
      async (item) => {
        started.push(item.id);
      },
      { perHost: 3, concurrency: 9, now: () => 0, burst: 4, defer: (run) => deferred.push(run) },
    );
    expect(started).toHaveLength(4);
    expect(deferred).toHaveLength(1);
    deferred.shift()?.();
    expect(started).toHaveLength(8);
    while (deferred.length > 0) deferred.shift()?.();
    await done;
    expect(started).toHaveLength(9);
  });

  it('never has more than `perDomain` jobs in flight on the hosts of one registrable domain (wildcard DNS)', async () => {
    // 300 names of one operator (one job each) and two other hosts: 3 per host would let all 300 go at once.
    const wild = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`n${i}.wild.example`, 1]));
    const sim = simulation(() => 10);
    const domainLoad = new Map<string, number>();
    let mostOnWild = 0;
    const work = (item: { host: string; id: number }) => {
      const domain = registrableDomain(item.host);
      domainLoad.set(domain, (domainLoad.get(domain) ?? 0) + 1);
      if (domain === 'wild.example') mostOnWild = Math.max(mostOnWild, domainLoad.get(domain)!);
      return sim.work(item).then(() => {
        domainLoad.set(domain, domainLoad.get(domain)! - 1);
      });
    };
    const wall = await sim.drive(
      runPerHost(jobs({ ...wild, 'api.other.example': 6, 'solo.example': 3 }), work, {
        perHost: 3,
        perDomain: 12,
        domainOf: registrableDomain,
        concurrency: 2048,
        now: sim.now,
      }),
    );
    expect(sim.started).toHaveLength(309);
    expect(mostOnWild).toBe(12);
    // The domain is the critical path: ceil(300 / 12) rounds; the other hosts go alongside, not after it.
    expect(wall).toBe(Math.ceil(300 / 12) * 10);
    expect(sim.maxPerHost.get('api.other.example')).toBe(3);
  });

  it('without `domainOf`, each host is its own domain', async () => {
    const sim = simulation(() => 10);
    await sim.drive(
      runPerHost(jobs({ 'a.x.example': 6, 'b.x.example': 6 }), sim.work, {
        perHost: 3,
        perDomain: 3,
        concurrency: 16,
        now: sim.now,
      }),
    );
    expect(sim.maxTotal()).toBe(6);
  });

  it('resolves at once with no jobs and rejects with the first error after the jobs in flight settle', async () => {
    await expect(runPerHost([], async () => {}, { perHost: 3, concurrency: 4, now: () => 0 })).resolves.toBe(
      undefined,
    );
    let ran = 0;
    const failing = runPerHost(
      jobs({ a: 10 }),
      async (item) => {
        ran++;
        if (item.id === 1) throw new Error('bug');
      },
      { perHost: 3, concurrency: 3, now: () => 0 },
    );
    await expect(failing).rejects.toThrow('bug');
    expect(ran).toBeLessThan(10); // nothing new started once the error was seen
  });
});

describe('registrableDomain', () => {
  it('groups the names of one operator and keeps platform tenants, IP literals and ports apart', () => {
    expect(registrableDomain('a.b.Wild.Example:8443')).toBe('wild.example');
    expect(registrableDomain('seller.example.')).toBe('seller.example');
    expect(registrableDomain('api.shop.example.co.uk')).toBe('example.co.uk');
    expect(registrableDomain('alice.vercel.app')).toBe('alice.vercel.app');
    expect(registrableDomain('bob.vercel.app')).toBe('bob.vercel.app');
    expect(registrableDomain('127.0.0.1:4021')).toBe('127.0.0.1:4021');
    expect(registrableDomain('127.0.0.1:4022')).toBe('127.0.0.1:4022');
    expect(registrableDomain('[2001:db8::1]:443')).toBe('[2001:db8::1]:443');
  });
});
