/**
 * Reading JSON request bodies with a hard size cap: a hostile or broken client costs bounded memory and time.
 */
import type { H3Event } from 'h3';
import { readBoundedText } from '../io/probe/bounded-body.ts';
import { apiError } from './errors.ts';

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Reads the body as a JSON object. An empty body reads as `{}`; a body that is not a JSON object is a 400
 * `bad_body`; a body over the cap is a 413 `body_too_large`.
 */
export async function readJsonObject(
  event: H3Event,
  limit = MAX_BODY_BYTES,
): Promise<Record<string, unknown>> {
  const declared = Number(event.req.headers.get('content-length') ?? '0');
  if (declared > limit) throw apiError(413, 'body_too_large', `The body is larger than ${limit} bytes.`);
  const text = await readText(event.req, limit);
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw apiError(400, 'bad_body', 'The body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw apiError(400, 'bad_body', 'The body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

async function readText(request: Request, limit: number): Promise<string> {
  const read = await readBoundedText(request.body, limit);
  if (read.truncated) throw apiError(413, 'body_too_large', `The body is larger than ${limit} bytes.`);
  return read.text;
}
