/**
 * API errors: one JSON shape, `{"error":{"code":"snake_case","message":"..."}}` (docs/api.md §7), with the status of
 * docs/api.md §7. Anything caused by the caller's input is a 4xx with a stable code; the codes are published in the README.
 */
import { HTTPError } from 'h3';
import { DatabaseUnavailable } from '../io/postgres/wait.ts';

/** Raises an API error from inside a handler; the app's error hook renders it. */
export function apiError(
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): HTTPError {
  return new HTTPError({
    status,
    statusText: code,
    message,
    data: { code },
    ...(headers ? { headers } : {}),
  });
}

/** The house error shape, `{"error":{"code","message"}}` (docs/api.md §7), as a response that is never cached. */
export function errorResponse(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json(
    { error: { code, message } },
    { status, headers: { 'cache-control': 'no-store', ...headers } },
  );
}

/**
 * The 503 of a request whose database did not answer in time or lost its connection (`io/postgres/wait.ts`), found
 * anywhere in the chain of causes of `error`; null for any other error.
 */
export function databaseUnavailable(error: unknown): Response | null {
  let cause = error;
  for (let depth = 0; typeof cause === 'object' && cause !== null && depth < 8; depth++) {
    if (cause instanceof DatabaseUnavailable) {
      return errorResponse(
        503,
        'database_unavailable',
        'The shared database did not answer in time; no payment was taken. Retry in a few seconds.',
        { 'retry-after': String(RETRY_AFTER_S) },
      );
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return null;
}

/** What a 503 `database_unavailable` asks the caller to wait before trying again. */
const RETRY_AFTER_S = 5;

/** Maps any error that reached the app to the JSON error shape; internals stay hidden. */
export function toErrorResponse(error: HTTPError): Response {
  const unavailable = databaseUnavailable(error);
  if (unavailable) {
    // One line per request: during an outage every request that needs the database ends here.
    console.error(`[spotcheck] [api] database unavailable: ${error.message}`);
    return unavailable;
  }
  const data = error.data as { code?: unknown } | undefined;
  if (typeof data?.code === 'string') {
    return errorResponse(
      error.status,
      data.code,
      error.message,
      error.headers ? Object.fromEntries(error.headers.entries()) : {},
    );
  }
  if (error.status === 404) return errorResponse(404, 'not_found', 'No such route.');
  if (error.status === 405)
    return errorResponse(405, 'method_not_allowed', 'This route does not take that method.');
  if (error.status === 413) return errorResponse(413, 'body_too_large', 'The request body is too large.');
  if (error.status >= 400 && error.status < 500) {
    return errorResponse(error.status, 'bad_request', error.message || 'Bad request.');
  }
  console.error('[spotcheck] [api] unhandled error', error.cause ?? error);
  return errorResponse(500, 'internal_error', 'Something went wrong on our side; nothing was charged.');
}
