import { describe, expect, it } from 'vitest';
import { parseLookupParams } from '../../../core/lookup-params.ts';

const TASKS = ['fx-rate', 'geocode'];
const parse = (raw: Record<string, unknown>, requireReference = false) =>
  parseLookupParams(raw, { tasks: TASKS, requireReference });
const code = (raw: Record<string, unknown>, requireReference = false) => {
  const parsed = parse(raw, requireReference);
  return parsed.ok ? 'ok' : parsed.code;
};

describe('parseLookupParams', () => {
  it('applies the defaults of docs/api.md §8', () => {
    expect(parse({})).toEqual({
      ok: true,
      value: {
        task: null,
        maxPriceUsd: null,
        n: 5,
        limit: 10,
        endpoint: null,
        client: null,
        ref: null,
        payer: null,
      },
    });
  });

  it('reads query strings and typed values alike', () => {
    const fromQuery = parse({ task: 'fx-rate', max_price: '0.050', n: '3', limit: '20' });
    const typed = parse({ task: 'fx-rate', max_price: 0.05, n: 3, limit: 20 });
    expect(fromQuery).toEqual(typed);
    expect(fromQuery.ok && fromQuery.value).toMatchObject({ maxPriceUsd: '0.05', n: 3, limit: 20 });
    expect(parse({ max_price: '0' }).ok && parse({ max_price: '0' })).toMatchObject({
      value: { maxPriceUsd: '0' },
    });
  });

  it('turns an endpoint URL into its service id and keeps a service id', () => {
    const url = parse({ endpoint: 'HTTPS://Api.Example/v1/fx/?b=1&a=2' });
    expect(url.ok && url.value.endpoint).toBe('api.example/v1/fx?a=2&b=1');
    const id = parse({ endpoint: 'api.example:8080/v1/fx' });
    expect(id.ok && id.value.endpoint).toBe('api.example:8080/v1/fx');
  });

  it('ignores unknown parameters and empty values', () => {
    expect(code({ utm_source: 'x', task: '', n: '' })).toBe('ok');
  });

  it.each([
    [{ task: ['fx-rate', 'geocode'] }, 'duplicate_parameter'],
    [{ task: 'Fx Rate' }, 'bad_task'],
    [{ task: 42 }, 'bad_task'],
    [{ task: 'weather-on-mars' }, 'unknown_task'],
    [{ max_price: '-1' }, 'bad_max_price'],
    [{ max_price: 'cheap' }, 'bad_max_price'],
    [{ max_price: 'NaN' }, 'bad_max_price'],
    [{ max_price: '1e400' }, 'bad_max_price'],
    [{ max_price: '2000000' }, 'bad_max_price'],
    [{ max_price: true }, 'bad_max_price'],
    [{ n: '0' }, 'bad_n'],
    [{ n: '21' }, 'bad_n'],
    [{ n: '2.5' }, 'bad_n'],
    [{ n: 2.5 }, 'bad_n'],
    [{ n: '-1' }, 'bad_n'],
    [{ limit: '0' }, 'bad_limit'],
    [{ limit: '100' }, 'bad_limit'],
    [{ endpoint: 'ftp://a.example/x' }, 'bad_endpoint'],
    [{ endpoint: 'https://' }, 'bad_endpoint'],
    [{ endpoint: 'not a service' }, 'bad_endpoint'],
    [{ endpoint: 7 }, 'bad_endpoint'],
    [{ client: 'c'.repeat(65) }, 'bad_client'],
    [{ ref: 'has space' }, 'bad_ref'],
    [{ payer: '0x123' }, 'bad_payer'],
    [{ payer: `0x${'g'.repeat(40)}` }, 'bad_payer'],
  ])('%j → %s', (raw, expected) => {
    expect(code(raw)).toBe(expected);
  });

  it('the paid route needs task or endpoint', () => {
    expect(code({}, true)).toBe('missing_task_or_endpoint');
    expect(code({ n: '3' }, true)).toBe('missing_task_or_endpoint');
    expect(code({ task: 'geocode' }, true)).toBe('ok');
    expect(code({ endpoint: 'a.example/x' }, true)).toBe('ok');
    // A bad parameter is named before the missing reference.
    expect(code({ n: '0' }, true)).toBe('bad_n');
  });

  it('accepts a payer wallet as attribution', () => {
    const wallet = `0x${'aB'.repeat(20)}`;
    const parsed = parse({ payer: wallet, client: 'my-agent', ref: 'campaign:7' });
    expect(parsed.ok && parsed.value).toMatchObject({ payer: wallet, client: 'my-agent', ref: 'campaign:7' });
  });
});
