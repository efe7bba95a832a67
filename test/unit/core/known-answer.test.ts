import { describe, expect, it } from 'vitest';
import { judgeAnswer, resolvePointer } from '../../../core/known-answer.ts';
import type { AnswerCheck } from '../../../core/tasks.ts';

const ok = (text: string, status = 200) => ({ status, text, truncated: false });
const RATE: AnswerCheck = { pointer: '/data/rate', equals: 1.0956 };

describe('judgeAnswer', () => {
  it('passes a JSON answer whose pointer holds the known value, key order and spelling aside', () => {
    expect(judgeAnswer(RATE, ok('{"data":{"rate":1.09560}}'))).toEqual({
      delivered: true,
      known_answer: 'pass',
      why: null,
      detail: null,
    });
    const deep: AnswerCheck = { pointer: '/a', equals: { y: [1, 'z'], x: null } };
    expect(judgeAnswer(deep, ok('{"a":{"x":null,"y":[1,"z"]}}')).known_answer).toBe('pass');
  });

  it('fails a delivered answer that is wrong, missing, or of another type', () => {
    expect(judgeAnswer(RATE, ok('{"data":{"rate":1.2}}'))).toMatchObject({
      delivered: true,
      known_answer: 'fail',
      why: 'value_differs',
    });
    expect(judgeAnswer(RATE, ok('{"data":{"rate":"1.0956"}}')).why).toBe('value_differs');
    expect(judgeAnswer(RATE, ok('{"data":{}}')).why).toBe('pointer_missing');
    expect(judgeAnswer(RATE, ok('[1,2]')).why).toBe('pointer_missing');
    expect(judgeAnswer(RATE, ok('{"data":{"__proto__":{"rate":1.0956}}}')).why).toBe('pointer_missing');
  });

  it('checks ranges for truths that move', () => {
    const range: AnswerCheck = { pointer: '/t', min: -60, max: 40 };
    expect(judgeAnswer(range, ok('{"t":21}')).known_answer).toBe('pass');
    expect(judgeAnswer(range, ok('{"t":41}')).why).toBe('out_of_range');
    expect(judgeAnswer(range, ok('{"t":"21"}')).why).toBe('out_of_range');
  });

  it('matches a regex on the text, with its flags', () => {
    const check: AnswerCheck = { regex: 'bonjour', flags: 'i' };
    expect(judgeAnswer(check, ok('Bonjour !')).known_answer).toBe('pass');
    expect(judgeAnswer(check, ok('hello'))).toMatchObject({ delivered: true, why: 'no_match' });
  });

  it('counts an error status, an empty body, a too-long body or non-JSON for a JSON task as not delivered', () => {
    for (const [answer, why] of [
      [ok('{"data":{"rate":1.0956}}', 500), 'bad_status'],
      [ok('', 402), 'bad_status'],
      [ok(' \n'), 'empty_body'],
      [{ status: 200, text: '{"data":', truncated: true }, 'answer_too_large'],
      [ok('<html>rate 1.0956</html>'), 'not_json'],
    ] as const) {
      expect(judgeAnswer(RATE, answer)).toMatchObject({ delivered: false, known_answer: 'fail', why });
    }
  });

  it('survives hostile bodies: huge, deeply nested, lone surrogates', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(judgeAnswer({ pointer: '/0/0/0', equals: 1 }, ok(deep)).why).toBe('value_differs');
    expect(judgeAnswer({ pointer: '', equals: [] }, ok(deep)).why).toBe('value_differs');
    const huge = `{"pad":"${'x'.repeat(900_000)}","data":{"rate":1.0956}}`;
    expect(judgeAnswer(RATE, ok(huge)).known_answer).toBe('pass');
    expect(judgeAnswer({ pointer: '/s', equals: 'a' }, ok('{"s":"\\ud800"}')).why).toBe('value_differs');
    expect(judgeAnswer({ regex: '^x+$' }, ok('x'.repeat(1_000_000))).known_answer).toBe('pass');
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
  it('refuses non-canonical indexes, inherited members and paths through scalars', () => {
    expect(resolvePointer(doc, '/foo/01')).toEqual({ ok: false });
    expect(resolvePointer(doc, '/foo/-')).toEqual({ ok: false });
    expect(resolvePointer(doc, '/foo/2')).toEqual({ ok: false });
    expect(resolvePointer(doc, '/toString')).toEqual({ ok: false });
    expect(resolvePointer(doc, '/foo/0/x')).toEqual({ ok: false });
  });
});
