/**
 * The two Spotcheck routes the guard calls, as plain HTTP: the check bound to the challenge the client received
 * (`POST /v1/products/endpoint-spot-check` with `payment_required` and `selected_requirement`) and payment status
 * (`POST /v1/products/payment-status` with the payment payload). Every failure is a value, never a throw.
 */
import type { PaymentStatusAnswer } from './types.ts';

/** How to reach Spotcheck. */
export type SpotcheckClient = {
  service: string;
  key?: string | undefined;
  endUser?: string | undefined;
  timeoutMs: number;
  fetch: typeof fetch;
};

/** What the check is asked. */
export type CheckRequest = {
  url: string;
  method: 'GET' | 'POST';
  paymentRequired: unknown;
  selectedRequirement: unknown;
  payTo?: string | undefined;
  network?: string | undefined;
  maxPriceUsd?: string | undefined;
  /** Seconds of the expiry rule (`check_expiry=1`, `skew_s`); null for none. */
  expirySkewS: number | null;
};

/** A check answer as far as the guard reads it. */
export type CheckAnswer = {
  verdict: string;
  reason_code: string;
  payment_terms_sha256: string | null;
  receipt_url: string | null;
  /** The probe's time and reuse window (full answers only: hosted, exempt or paid). */
  probe: { probed_at: string; cache_ttl_s: number } | null;
};

/** The outcome of one call: an answer, a refusal of the input (a 400 with its code), or no answer and why. */
export type Reply<T> =
  | { kind: 'answer'; answer: T }
  | { kind: 'rejected'; status: number; code: string }
  | { kind: 'failed'; cause: string };

const CHECK_PATH = '/v1/products/endpoint-spot-check';
const STATUS_PATH = '/v1/products/payment-status';

/** Asks the check about exactly the challenge the client received and the requirement it selected. */
export async function askCheck(client: SpotcheckClient, request: CheckRequest): Promise<Reply<CheckAnswer>> {
  const body: Record<string, unknown> = {
    url: request.url,
    method: request.method,
    payment_required: request.paymentRequired,
    selected_requirement: request.selectedRequirement,
    client: 'x402-guard',
  };
  if (request.payTo !== undefined) body['pay_to'] = request.payTo;
  if (request.network !== undefined) body['network'] = request.network;
  if (request.maxPriceUsd !== undefined) body['claimed_price'] = request.maxPriceUsd;
  if (request.expirySkewS !== null) {
    body['check_expiry'] = 1;
    body['skew_s'] = request.expirySkewS;
  }
  const reply = await post(client, CHECK_PATH, body);
  if (reply.kind !== 'answer') return reply;
  const answer = parseCheckAnswer(reply.answer);
  return answer === null ? { kind: 'failed', cause: 'bad_answer' } : { kind: 'answer', answer };
}

/** Asks payment status about a payment payload (the `PAYMENT-SIGNATURE` or `X-PAYMENT` value that was sent). */
export async function askPaymentStatus(
  client: SpotcheckClient,
  paymentPayload: string,
  sellerUrl: string | null,
): Promise<Reply<PaymentStatusAnswer>> {
  const body: Record<string, unknown> = { payment_payload: paymentPayload, client: 'x402-guard' };
  if (sellerUrl !== null) body['seller_url'] = sellerUrl;
  const reply = await post(client, STATUS_PATH, body);
  if (reply.kind !== 'answer') return reply;
  const answer = reply.answer;
  if (
    !isRecord(answer) ||
    typeof answer['status'] !== 'string' ||
    typeof answer['safe_to_resign'] !== 'boolean'
  )
    return { kind: 'failed', cause: 'bad_answer' };
  return { kind: 'answer', answer: answer as PaymentStatusAnswer };
}

async function post(client: SpotcheckClient, path: string, body: unknown): Promise<Reply<unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (client.key !== undefined) headers['authorization'] = `Bearer ${client.key}`;
  if (client.key !== undefined && client.endUser !== undefined)
    headers['x-service-end-user'] = client.endUser;
  let response: Response;
  let text: string;
  const signal = AbortSignal.timeout(client.timeoutMs);
  try {
    // The signal bounds a fetch that honours it; the race bounds one that does not (a caller's own `fetch`).
    [response, text] = await Promise.race([
      (async () => {
        const answer = await client.fetch(new URL(path, client.service), {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          signal,
        });
        return [answer, await answer.text()] as const;
      })(),
      new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
    ]);
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    return {
      kind: 'failed',
      cause: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'unreachable',
    };
  }
  const json = parseJson(text);
  if (response.status === 200) return { kind: 'answer', answer: json };
  if (response.status === 400 && isRecord(json) && isRecord(json['error'])) {
    const code = json['error']['code'];
    if (typeof code === 'string') return { kind: 'rejected', status: 400, code };
  }
  return { kind: 'failed', cause: `http_${response.status}` };
}

function parseCheckAnswer(value: unknown): CheckAnswer | null {
  if (!isRecord(value) || typeof value['verdict'] !== 'string') return null;
  const hash = value['payment_terms_sha256'];
  const reason = value['reason_code'] ?? value['reason'];
  const probe = value['probe'];
  const fresh =
    isRecord(probe) && typeof probe['probed_at'] === 'string' && typeof probe['cache_ttl_s'] === 'number'
      ? { probed_at: probe['probed_at'], cache_ttl_s: probe['cache_ttl_s'] }
      : null;
  return {
    verdict: value['verdict'],
    reason_code: typeof reason === 'string' ? reason : 'unknown',
    payment_terms_sha256: typeof hash === 'string' ? hash : null,
    receipt_url: typeof value['receipt_url'] === 'string' ? value['receipt_url'] : null,
    probe: fresh,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
