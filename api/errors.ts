/**
 * API errors: one JSON shape, `{"error":{"code":"snake_case","message":"..."}}` (design.md), with the status of
 * spec §7. Anything caused by the caller's input is a 4xx with a stable code; the codes are published in the README.
 */
import { HTTPError } from 'h3';

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

/** Renders an error body as a response. */
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

/** Maps any error that reached the app to the JSON error shape; internals stay hidden. */
export function toErrorResponse(error: HTTPError): Response {
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
