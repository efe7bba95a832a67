import { describe, expect, it } from 'vitest';
import { MAX_CANDIDATES, parseTasks, publicTask, requestUrl } from '../../../core/tasks.ts';
import file from '../../../data/tasks.json' with { type: 'json' };

const task = {
  name: 'a',
  description: 'A task.',
  request: { method: 'GET', query: { q: 'x' } },
  answer_check: { pointer: '/a', equals: 1 },
  candidates: ['https://a.example/run'],
};
const withTask = (extra: Record<string, unknown>) => parseTasks({ tasks: [{ ...task, ...extra }] });

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

  it('accepts each answer check: pointer equals, pointer range, regex', () => {
    expect(withTask({}).ok).toBe(true);
    expect(withTask({ answer_check: { pointer: '/a/0', equals: { b: [1, null] } } }).ok).toBe(true);
    expect(withTask({ answer_check: { pointer: '/t', min: -5 } }).ok).toBe(true);
    expect(withTask({ answer_check: { regex: '^ok$', flags: 'im' } }).ok).toBe(true);
    expect(withTask({ request: { method: 'POST', body: { text: 'abc' } } }).ok).toBe(true);
  });

  it('refuses what it cannot run, naming the path', () => {
    expect(parseTasks({ tasks: [task, task] })).toEqual({ ok: false, message: 'task names repeat' });
    expect(withTask({ answer_check: { pointer: '/a' } }).ok).toBe(false);
    expect(withTask({ answer_check: { pointer: 'a', equals: 1 } }).ok).toBe(false);
    expect(withTask({ answer_check: { pointer: '/a~2', equals: 1 } }).ok).toBe(false);
    expect(withTask({ answer_check: { regex: '(' } }).ok).toBe(false);
    expect(withTask({ answer_check: { regex: 'a', flags: 'g' } }).ok).toBe(false);
    expect(withTask({ answer_check: { regex: 'a', flags: 'ii' } }).ok).toBe(false);
    expect(withTask({ answer_check: { pointer: '/a', equals: 1, regex: 'x' } }).ok).toBe(false);
    expect(withTask({ request: { method: 'GET', body: {} } }).ok).toBe(false);
    expect(withTask({ request: { method: 'PUT' } }).ok).toBe(false);
    expect(withTask({ name: 'Bad Name' }).ok).toBe(false);
    expect(withTask({ extra: 1 }).ok).toBe(false);
    expect(parseTasks({ tasks: [] }).ok).toBe(false);
    expect(parseTasks('nope').ok).toBe(false);
    const credentials = withTask({ candidates: ['https://u:p@a.example/x'] });
    expect(credentials).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^tasks\.0\.candidates\.0: /),
    });
    expect(withTask({ candidates: ['ftp://a.example/x'] }).ok).toBe(false);
    const many = Array.from({ length: MAX_CANDIDATES + 1 }, (_, i) => `https://a.example/${i}`);
    expect(withTask({ candidates: many }).ok).toBe(false);
  });

  it('publishes tasks without their answer checks', () => {
    const parsed = parseTasks(file);
    if (!parsed.ok) throw new Error(parsed.message);
    for (const t of parsed.value) {
      const shown = publicTask(t);
      expect(shown).not.toHaveProperty('answer_check');
      expect(shown).toMatchObject({ name: t.name, request: t.request, candidates: t.candidates });
    }
  });
});

describe('requestUrl', () => {
  it('adds the task query to the candidate, replacing a parameter of the same name', () => {
    expect(
      requestUrl('https://a.example/fx?x=1&base=GBP', { method: 'GET', query: { base: 'EUR', n: 2 } }),
    ).toBe('https://a.example/fx?x=1&base=EUR&n=2');
    expect(requestUrl('https://a.example/fx', { method: 'POST', body: {} })).toBe('https://a.example/fx');
  });
});
