import { describe, expect, it } from 'vitest';
import type { PaidCallRecord } from '../../../core/catalog.ts';
import { createRecentPaidCalls } from '../../../io/store/recent-paid-calls.ts';
import { paidCallAt } from '../../helpers/paid-calls.ts';

/** A call to `https://<host>/run` for `task`, `minute` minutes into the day. */
const call = (host: string, minute: number, task = 'fx-rate'): PaidCallRecord =>
  paidCallAt(host, new Date(Date.UTC(2026, 10, 1, 0, minute)), minute, { task });

describe('createRecentPaidCalls', () => {
  it('answers the same array to the same ranking query until a call is added, then a new one with it', () => {
    const recent = createRecentPaidCalls();
    recent.add(call('a.example', 1));
    const first = recent.query({ task: 'fx-rate', perService: 5 });
    expect(recent.query({ task: 'fx-rate', perService: 5 })).toBe(first);
    recent.add(call('b.example', 2));
    const after = recent.query({ task: 'fx-rate', perService: 5 });
    expect(after).not.toBe(first);
    expect(after?.map((r) => r.service_id).sort()).toEqual(['a.example/run', 'b.example/run']);
    expect(first?.map((r) => r.service_id)).toEqual(['a.example/run']);
  });

  it('keeps each query its own answer: task or none, n, endpoint and host', () => {
    const recent = createRecentPaidCalls();
    for (const m of [1, 2, 3]) recent.add(call('a.example', m));
    recent.add(call('b.example', 4, 'geocode'));
    const ids = (query: Parameters<typeof recent.query>[0]) =>
      recent.query(query)?.map((r) => `${r.service_id} ${r.called_at.slice(14, 16)}`);
    expect(ids({ perService: 1 })?.sort()).toEqual(['a.example/run 03', 'b.example/run 04']);
    expect(ids({ task: 'geocode', perService: 1 })).toEqual(['b.example/run 04']);
    expect(ids({ task: 'fx-rate', perService: 2 })).toEqual(['a.example/run 03', 'a.example/run 02']);
    expect(ids({ perService: 2 })?.sort()).toEqual([
      'a.example/run 02',
      'a.example/run 03',
      'b.example/run 04',
    ]);
    expect(ids({ task: '', perService: 2 })).toEqual([]);
    expect(ids({ endpoint: 'b.example/run', perService: 5 })).toEqual(['b.example/run 04']);
    expect(ids({ host: 'a.example', perService: 1 })).toEqual(['a.example/run 03']);
    // Asked again, in another order: the same answers.
    expect(ids({ task: '', perService: 2 })).toEqual([]);
    expect(ids({ perService: 1 })?.sort()).toEqual(['a.example/run 03', 'b.example/run 04']);
    expect(recent.query({ perService: 21 })).toBeNull();
  });

  it('lets no host or endpoint query push a ranking answer out', () => {
    const recent = createRecentPaidCalls();
    recent.add(call('a.example', 1));
    const ranking = recent.query({ task: 'fx-rate', perService: 5 });
    for (let i = 0; i < 500; i++) recent.query({ host: `h${i}.example`, perService: 20 });
    for (let i = 0; i < 500; i++) recent.query({ endpoint: `h${i}.example/run`, perService: 20 });
    expect(recent.query({ task: 'fx-rate', perService: 5 })).toBe(ranking);
  });
});
