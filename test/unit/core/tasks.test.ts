import { describe, expect, it } from 'vitest';
import { MAX_CANDIDATES, parseTasks, publicTask, type Task, taskRequest } from '../../../core/tasks.ts';
import file from '../../../data/tasks.json' with { type: 'json' };

const task = {
  name: 'a',
  description: 'A task.',
  inputs: { x: { kind: 'integer', min: 1, max: 100 } },
  request: { method: 'GET', query: { q: '{x}' } },
  answer: [{ pointer: '/a', equals: { sum: [{ input: 'x' }, 1] } }],
  candidates: ['https://a.example/run'],
};
const withTask = (extra: Record<string, unknown>) => parseTasks({ tasks: [{ ...task, ...extra }] });
const SEED = '0123456789abcdef0123456789abcdef';

describe('the task catalog', () => {
  it('data/tasks.json is valid and names the eight tasks', () => {
    const parsed = parseTasks(file);
    if (!parsed.ok) throw new Error(parsed.message);
    expect(parsed.value.map((t) => t.name)).toEqual([
      'weather-current',
      'fx-rate',
      'token-price',
      'geocode',
      'translate-short',
      'summarize-url',
      'image-caption',
      'hash-sha256',
    ]);
  });

  it('accepts each check: equals, near, range, a pattern; inputs of each kind', () => {
    expect(withTask({})).toMatchObject({ ok: true });
    const ok = (answer: unknown[], inputs: unknown = task.inputs) =>
      withTask({ answer, inputs, request: { method: 'GET' } }).ok;
    expect(
      ok([
        { pointer: '/a/0', equals: { value: { b: [1, null] } } },
        { pointer: '/x', equals: { input: 'x' } },
      ]),
    ).toBe(true);
    expect(ok([{ pointer: '/t', near: { product: [{ input: 'x' }, 1.5] }, tolerance: 0.1 }])).toBe(true);
    expect(ok([{ pointer: '/t', min: -5, max: { input: 'x' } }])).toBe(true);
    expect(ok([{ pointer: '/t', matches: 'ok {x}', flags: 'is' }])).toBe(true);
    const text = { s: { kind: 'text', length: 16 } };
    expect(ok([{ pointer: '/h', equals: { sha256: { input: 's' } } }], text)).toBe(true);
    const decimal = { d: { kind: 'decimal', min: 0.5, max: 9.75, places: 2 } };
    expect(ok([{ pointer: '/h', near: { input: 'd' }, tolerance: 0.01 }], decimal)).toBe(true);
    const rows = Array.from({ length: 6 }, (_, i) => ({ name: `p${i}`, words: [`w${i}`] }));
    expect(ok([{ pointer: '/c', matches: '.*{p.words}.*' }], { p: { kind: 'choice', values: rows } })).toBe(
      true,
    );
  });

  it('refuses a task whose answer a constant body could pass: no input, or only a short table', () => {
    expect(withTask({ answer: [{ pointer: '/a', equals: 1 }] })).toEqual({
      ok: false,
      message: 'tasks.0: answer: no check depends on an input, so a constant answer would pass',
    });
    expect(withTask({ answer: [{ pointer: '/t', min: 0.97, max: 1.03 }] }).ok).toBe(false);
    // `big` ≥ x: a constant 10^12 passes whatever x is drawn.
    expect(withTask({ answer: [{ pointer: '/big', min: { input: 'x' } }] }).ok).toBe(false);
    expect(
      withTask({ answer: [{ pointer: '/v', min: { input: 'x' }, max: { sum: [{ input: 'x' }, 1] } }] }).ok,
    ).toBe(true);
    const rows = Array.from({ length: 5 }, (_, i) => ({ name: `p${i}` }));
    const short = withTask({
      inputs: { p: { kind: 'choice', values: rows } },
      request: { method: 'GET', query: { q: '{p.name}' } },
      answer: [{ pointer: '/n', equals: { input: 'p.name' } }],
    });
    expect(short).toMatchObject({ ok: false, message: expect.stringMatching(/tables of fewer than 6 rows/) });
  });

  it('refuses what it cannot run, naming the path', () => {
    expect(parseTasks({ tasks: [task, task] })).toEqual({ ok: false, message: 'task names repeat' });
    const bad = (extra: Record<string, unknown>) => expect(withTask(extra).ok).toBe(false);
    bad({ answer: [{ pointer: '/a' }] });
    bad({ answer: [{ pointer: 'a', equals: { input: 'x' } }] });
    // The whole document is not a field: a check reads one exact value.
    bad({ answer: [{ pointer: '', equals: { input: 'x' } }] });
    bad({ answer: [{ pointer: '/a~2', equals: { input: 'x' } }] });
    bad({ answer: [{ pointer: '/a', matches: '({x}' }] });
    // `m` would let ^ and $ match inside the value; `g` makes a pattern stateful.
    bad({ answer: [{ pointer: '/a', matches: '{x}', flags: 'm' }] });
    bad({ answer: [{ pointer: '/a', matches: '{x}', flags: 'g' }] });
    bad({ answer: [{ regex: 'bonjour', flags: 'i' }] });
    expect(withTask({ answer_check: { pointer: '/a', equals: 1 } })).toEqual({
      ok: false,
      message: expect.stringMatching(/^tasks\.0: answer_check is the earlier shape/),
    });
    bad({ answer: [{ pointer: '/a', equals: { input: 'y' } }] });
    bad({ answer: [{ pointer: '/a', near: { text: '{x}' }, tolerance: 1 }] });
    bad({
      answer: [{ pointer: '/a', equals: { input: 'x' } }],
      request: { method: 'GET', query: { q: '{y}' } },
    });
    bad({ answer: [{ pointer: '/a', equals: { input: 'x' }, matches: 'x' }] });
    bad({ answer: [] });
    bad({ inputs: {} });
    bad({ inputs: { x: { kind: 'integer', min: 5, max: 5 } } });
    bad({ inputs: { x: { kind: 'decimal', min: 0.123, max: 1, places: 2 } } });
    bad({ inputs: { x: { kind: 'text', length: 4 } } });
    bad({ inputs: { x: { kind: 'choice', values: [{ a: 1 }, { b: 2 }] } } });
    bad({ request: { method: 'GET', body: {} } });
    bad({ request: { method: 'PUT' } });
    bad({ name: 'Bad Name' });
    bad({ extra: 1 });
    expect(parseTasks({ tasks: [] }).ok).toBe(false);
    expect(parseTasks('nope').ok).toBe(false);
    const credentials = withTask({ candidates: ['https://u:p@a.example/x'] });
    expect(credentials).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^tasks\.0\.candidates\.0: /),
    });
    bad({ candidates: ['ftp://a.example/x'] });
    bad({ candidates: Array.from({ length: MAX_CANDIDATES + 1 }, (_, i) => `https://a.example/${i}`) });
  });

  it('publishes tasks without their inputs and answer checks', () => {
    const parsed = parseTasks(file);
    if (!parsed.ok) throw new Error(parsed.message);
    for (const t of parsed.value) {
      const shown = publicTask(t);
      expect(shown).not.toHaveProperty('answer');
      expect(shown).not.toHaveProperty('inputs');
      expect(shown).toMatchObject({ name: t.name, request: t.request, candidates: t.candidates });
    }
  });
});

describe('taskRequest', () => {
  const parsed = parseTasks(file);
  if (!parsed.ok) throw new Error(parsed.message);
  const byName = (name: string) => parsed.value.find((t) => t.name === name) as Task;

  it('adds the rendered query to the candidate, replacing a parameter of the same name', () => {
    const fx = taskRequest(byName('fx-rate'), 'https://a.example/fx?x=1&base=GBP', SEED);
    const url = new URL(fx.url);
    expect([...url.searchParams.keys()]).toEqual(['x', 'base', 'quote', 'date', 'amount']);
    expect(url.searchParams.get('base')).toBe('EUR');
    expect(Number(url.searchParams.get('amount'))).toBe(fx.inputs.amount);
    expect(fx.body).toBeUndefined();
  });

  it('renders a POST body: a whole placeholder keeps its value, text around it is kept', () => {
    const hash = taskRequest(byName('hash-sha256'), 'https://a.example/h', SEED);
    expect(hash).toMatchObject({
      method: 'POST',
      url: 'https://a.example/h',
      body: { text: hash.inputs.text },
    });
    expect(hash.inputs.text).toMatch(/^[a-z0-9]{32}$/);
    const translate = taskRequest(byName('translate-short'), 'https://a.example/t', SEED);
    const { n, item } = translate.inputs as { n: number; item: { en: string } };
    expect(translate.body).toEqual({ text: `I have ${n} ${item.en}.`, to: 'fr' });
  });

  it('draws fresh inputs per seed, the same for the same seed', () => {
    const hash = byName('hash-sha256');
    const a = taskRequest(hash, 'https://a.example/h', SEED);
    expect(taskRequest(hash, 'https://a.example/h', SEED)).toEqual(a);
    expect(taskRequest(hash, 'https://a.example/h', 'f'.repeat(32)).inputs).not.toEqual(a.inputs);
  });
});
