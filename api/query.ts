/**
 * Query strings as objects for the parameter parsers: a parameter given twice stays an array, so the parser can
 * refuse it instead of silently taking one of the values.
 */
import type { H3Event } from 'h3';

/** The request's query parameters; repeated names map to arrays. */
export function queryOf(event: H3Event): Record<string, unknown> {
  const params = new URL(event.req.url).searchParams;
  const out: Record<string, unknown> = {};
  for (const name of new Set(params.keys())) {
    const all = params.getAll(name);
    out[name] = all.length > 1 ? all : all[0];
  }
  return out;
}
