import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resolvePointer } from '../../../core/json-pointer.ts';
import { type DeliveredAnswer, judgeAnswer } from '../../../core/known-answer.ts';
import { drawInputs } from '../../../core/task-inputs.ts';
import { parseTasks, type Task } from '../../../core/tasks.ts';
import file from '../../../data/tasks.json' with { type: 'json' };

const parsed = parseTasks(file);
if (!parsed.ok) throw new Error(parsed.message);
const CATALOG = parsed.value;
const task = (name: string) => CATALOG.find((t) => t.name === name) as Task;
const others = (t: Task) => CATALOG.filter((o) => o.name !== t.name);

const ok = (body: unknown, status = 200): DeliveredAnswer => ({
  status,
  text: typeof body === 'string' ? body : JSON.stringify(body),
  truncated: false,
});
/** Seeds as a run draws them: 16 random bytes, here from a counter so the test is deterministic. */
const seeds = (count: number) =>
  Array.from({ length: count }, (_, i) => createHash('sha256').update(String(i)).digest('hex').slice(0, 32));
const SEED = seeds(1)[0] as string;
const judge = (t: Task, body: unknown, seed = SEED, rest = others(t)) =>
  judgeAnswer({ task: t, seed, others: rest }, ok(body));

/** The inputs of the catalog's tasks, by name (each task draws only its own). */
type CatalogInputs = {
  lat: number;
  lon: number;
  amount: number;
  n: number;
  text: string;
  place: { lat: number; lon: number };
  item: { fr: string[] };
  page: { subject: string[] };
  image: { subject: string[] };
};

/** What an honest seller of each catalog task answers, computed from the inputs of the call. */
function honest(t: Task, seed: string): Record<string, unknown> {
  const x = drawInputs(t.name, t.inputs, seed) as unknown as CatalogInputs;
  switch (t.name) {
    case 'weather-current':
      return { latitude: x.lat, longitude: x.lon, temperature_c: 12.5 };
    case 'fx-rate':
      return { rate: 1.0956, converted: Math.round(x.amount * 1.0956 * 100) / 100 };
    case 'token-price':
      return { amount: x.amount, price: 1.0002, value_usd: x.amount * 1.0002 };
    case 'geocode':
      return { lat: x.place.lat + 0.002, lon: x.place.lon - 0.002 };
    case 'translate-short':
      return { translation: `J’ai ${x.n} ${x.item.fr[0]}.` };
    case 'summarize-url':
      return { summary: `The page is about ${x.page.subject[0]}.\nIt says more.` };
    case 'image-caption':
      return { caption: `A close-up photo of a ${x.image.subject[0]}.` };
    case 'hash-sha256':
      return { sha256: createHash('sha256').update(x.text).digest('hex') };
    default:
      throw new Error(t.name);
  }
}

/** One body that passed all eight tasks of data/tasks.json when their checks searched the whole text. */
const CONSTANT = {
  temperature_c: 10,
  price: 1,
  note: '1.0956 48.85 bonjour example cat ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
};

describe('judgeAnswer on the catalog', () => {
  it('passes an honest answer to every task, for fresh inputs on every call', () => {
    for (const seed of seeds(100))
      for (const t of CATALOG)
        expect([t.name, judge(t, honest(t, seed), seed)]).toEqual([
          t.name,
          { delivered: true, known_answer: 'pass', why: null, detail: null },
        ]);
  });

  it('fails every task with one constant body, on every call', () => {
    for (const seed of seeds(100))
      for (const t of CATALOG) expect(judge(t, CONSTANT, seed).known_answer).toBe('fail');
  });

  it('fails an answer memorized from another call: the inputs are fresh', () => {
    const [first, second] = seeds(2) as [string, string];
    for (const name of ['fx-rate', 'token-price', 'hash-sha256', 'weather-current', 'translate-short']) {
      const t = task(name);
      expect(judge(t, honest(t, first), second).known_answer).toBe('fail');
    }
  });

  it('fails an answer right for task A that also passes task B for the same seed', () => {
    const hash = task('hash-sha256');
    const fx = task('fx-rate');
    const both = { ...honest(hash, SEED), ...honest(fx, SEED) };
    expect(judge(hash, honest(hash, SEED)).known_answer).toBe('pass');
    expect(judge(hash, both)).toEqual({
      delivered: true,
      known_answer: 'fail',
      why: 'passes_other_task',
      detail: 'the answer also passes task fx-rate, so it answers no task in particular',
    });
    expect(judge(fx, both).why).toBe('passes_other_task');
    // Judged alone (a run of one task), the same body is right.
    expect(judge(hash, both, SEED, []).known_answer).toBe('pass');
  });

  it('fails an answer that names every row of a table: a caption of everything captions nothing', () => {
    const caption = task('image-caption');
    expect(judge(caption, { caption: 'A cat, a dog, dice, an ant, a bee and a boardwalk.' })).toMatchObject({
      delivered: true,
      known_answer: 'fail',
      why: 'matches_other_input',
    });
    const summary = task('summarize-url');
    const everything = 'Jupiter, chess, penguins, photosynthesis, violins, coffee, bicycles and honey.';
    expect(judge(summary, { summary: everything }).why).toBe('matches_other_input');
  });

  it('reads exact fields with patterns anchored to the whole value', () => {
    const translate = task('translate-short');
    const right = honest(translate, SEED).translation as string;
    expect(judge(translate, { translation: right }).known_answer).toBe('pass');
    expect(judge(translate, { translation: `Bonjour. ${right}` }).why).toBe('no_match');
    expect(judge(translate, { translation: `${right} Bonjour.` }).why).toBe('no_match');
    expect(judge(translate, { text: right }).why).toBe('pointer_missing');
    expect(judge(translate, { translation: [right] }).why).toBe('no_match');
    const hash = task('hash-sha256');
    const digest = honest(hash, SEED).sha256 as string;
    expect(judge(hash, { sha256: `${digest} ` }).why).toBe('value_differs');
    expect(judge(hash, { note: digest, sha256: 'x' }).why).toBe('value_differs');
    expect(judge(hash, { sha256: digest.toUpperCase() }).why).toBe('value_differs');
  });

  it('compares numbers exactly, within a tolerance, or within computed bounds', () => {
    const fx = task('fx-rate');
    const right = honest(fx, SEED);
    expect(judge(fx, { ...right, rate: 1.0956 }).known_answer).toBe('pass');
    expect(judge(fx, { ...right, rate: '1.0956' }).why).toBe('value_differs');
    expect(judge(fx, { ...right, converted: (right.converted as number) + 0.02 }).why).toBe('out_of_range');
    const price = task('token-price');
    const amount = drawInputs(price.name, price.inputs, SEED).amount as number;
    expect(judge(price, { amount, price: 1, value_usd: amount * 1.02 }).known_answer).toBe('pass');
    expect(judge(price, { amount, price: 1, value_usd: amount * 1.04 }).why).toBe('out_of_range');
    expect(judge(price, { amount, price: 1, value_usd: String(amount) }).why).toBe('out_of_range');
    expect(judge(price, { amount: amount + 1, price: 1, value_usd: amount }).why).toBe('value_differs');
  });
});

describe('judgeAnswer: delivery', () => {
  const hash = task('hash-sha256');
  const right = honest(hash, SEED);

  it('counts an error status, an empty body, a too-long body or non-JSON as not delivered', () => {
    for (const [answer, why] of [
      [ok(right, 500), 'bad_status'],
      [ok('', 402), 'bad_status'],
      [ok(' \n'), 'empty_body'],
      [{ status: 200, text: '{"sha256":', truncated: true }, 'answer_too_large'],
      [ok(`<html>${right.sha256}</html>`), 'not_json'],
    ] as const) {
      const verdict = judgeAnswer({ task: hash, seed: SEED, others: [] }, answer);
      expect(verdict).toMatchObject({ delivered: false, known_answer: 'fail', why });
    }
  });

  it('survives hostile bodies: huge, deeply nested, lone surrogates, prototype keys', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(judge(hash, deep).why).toBe('pointer_missing');
    const huge = `{"pad":"${'x'.repeat(900_000)}","sha256":"${right.sha256}"}`;
    expect(judge(hash, huge).known_answer).toBe('pass');
    expect(judge(hash, '{"sha256":"\\ud800"}').why).toBe('value_differs');
    expect(judge(hash, `{"__proto__":{"sha256":"${right.sha256}"}}`).why).toBe('pointer_missing');
    const long = `{"translation":"${'x'.repeat(1_000_000)}"}`;
    expect(judge(task('translate-short'), long).why).toBe('no_match');
  });
});

describe('resolvePointer (RFC 6901)', () => {
  const doc = { foo: ['bar', 'baz'], '': 0, 'a/b': 1, 'm~n': 8, ' ': 7 };
  it('resolves the examples of RFC 6901 section 5', () => {
    expect(resolvePointer(doc, '')).toEqual({ ok: true, value: doc });
    expect(resolvePointer(doc, '/foo')).toEqual({ ok: true, value: ['bar', 'baz'] });
    expect(resolvePointer(doc, '/foo/0')).toEqual({ ok: true, value: 'bar' });
    expect(resolvePointer(doc, '/')).toEqual({ ok: true, value: 0 });
    expect(resolvePointer(doc, '/a~1b')).toEqual({ ok: true, value: 1 });
    expect(resolvePointer(doc, '/m~0n')).toEqual({ ok: true, value: 8 });
    expect(resolvePointer(doc, '/ ')).toEqual({ ok: true, value: 7 });
  });
  it('refuses what is not there', () => {
    expect(resolvePointer(doc, '/foo/01')).toEqual({ ok: false });
    expect(resolvePointer(doc, '/foo/-')).toEqual({ ok: false });
    expect(resolvePointer(doc, '/foo/2')).toEqual({ ok: false });
    expect(resolvePointer(doc, '/toString')).toEqual({ ok: false });
    expect(resolvePointer(doc, '/foo/0/x')).toEqual({ ok: false });
  });
});
