/**
 * The request a listing's example parameters make (docs/api.md §2.10): the query on the URL for GET and POST, the JSON body
 * for a POST only, and nothing oversized.
 */
import { describe, expect, it } from 'vitest';
import type { PlannedEndpoint } from '../../../core/crawl-plan.ts';
import { exampleRequest, MAX_EXAMPLE_BODY_BYTES } from '../../../crawl/probe-endpoint.ts';

const endpoint = (method: 'GET' | 'POST', example: PlannedEndpoint['example']): PlannedEndpoint => ({
  urlNorm: 'https://a.example/x',
  url: 'https://a.example/x?keep=1',
  host: 'a.example',
  method,
  listing: {
    url: 'https://a.example/x',
    method,
    priceUsd: null,
    network: null,
    asset: null,
    payTo: null,
    source: 's',
  },
  sourceList: 's',
  alsoListedIn: [],
  example,
});

describe('exampleRequest', () => {
  it('puts the example query on the URL, and sends no body with a GET', () => {
    expect(exampleRequest(endpoint('GET', { query: { city: 'paris' }, body: { q: 1 } }))).toEqual({
      url: 'https://a.example/x?keep=1&city=paris',
      body: null,
      context: { example_query: { city: 'paris' } },
    });
    expect(exampleRequest(endpoint('GET', { query: null, body: { q: 1 } }))).toBeNull();
  });

  it('sends a POST listing its example JSON body, with its query if any', () => {
    expect(exampleRequest(endpoint('POST', { query: null, body: { prompt: 'hi', n: [1, 2] } }))).toEqual({
      url: 'https://a.example/x?keep=1',
      body: '{"prompt":"hi","n":[1,2]}',
      context: { example_body: { prompt: 'hi', n: [1, 2] } },
    });
    expect(exampleRequest(endpoint('POST', { query: { v: '2' }, body: 'text' }))).toMatchObject({
      url: 'https://a.example/x?keep=1&v=2',
      body: '"text"',
    });
  });

  it('refuses an oversized example body, and is null without any example', () => {
    const big = { blob: 'x'.repeat(MAX_EXAMPLE_BODY_BYTES) };
    expect(exampleRequest(endpoint('POST', { query: null, body: big }))).toBeNull();
    expect(exampleRequest(endpoint('POST', null))).toBeNull();
  });
});
