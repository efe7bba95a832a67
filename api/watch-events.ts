/**
 * A watch's events as signed documents (docs/api.md "Watches"): each one JSON signed like a receipt (RFC 8785,
 * Ed25519, `kid`), addressed to one watch, naming the receipt that showed the change; kept for the watch's owner
 * and, when the watch has a webhook and subscribed to the event, put in the outbox in the same transaction.
 */
import type { HttpMethod } from '../core/model.ts';
import { receiptUrlOf, type Signer, signReceiptJson } from '../core/receipt.ts';
import type { WatchEventType, WatchNoticeType } from '../core/watch-events.ts';
import type { NewEvent, WatchRow } from '../io/watches/port.ts';

/** What one event says, before it is addressed and signed. */
export type EventContent = {
  event: WatchEventType | WatchNoticeType;
  receiptId: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
};

/** What signing needs: the key, the public origin and a source of random ids. */
export type EventSigning = {
  signer: () => Signer;
  baseUrl: string;
  random: (n: number) => Uint8Array;
};

/** A new id: the prefix and 128 random bits in hex (`wa-` watches, `we-` events). */
export function newWatchId(prefix: 'wa-' | 'we-', random: (n: number) => Uint8Array): string {
  return prefix + Buffer.from(random(16)).toString('hex');
}

/**
 * The signed event `content` for `watch`, ready to record: sent to the watch's webhook only when it has one and
 * subscribed to the event (notices about the watch itself are never sent).
 */
export function addressedEvent(
  signing: EventSigning,
  watch: Pick<WatchRow, 'id' | 'url' | 'method' | 'webhookUrl' | 'events'>,
  content: EventContent,
  at: Date,
): NewEvent {
  const id = newWatchId('we-', signing.random);
  const occurredAt = at.toISOString();
  const body = signedEventText(
    signing,
    { id, watchId: watch.id, url: watch.url, method: watch.method, occurredAt },
    content,
  );
  const subscribed = (watch.events as string[]).includes(content.event);
  return {
    id,
    watchId: watch.id,
    event: content.event,
    occurredAt,
    body,
    webhookUrl: subscribed ? watch.webhookUrl : null,
  };
}

/** The JSON text of one signed event (the receipt's text form: canonical members, `signature` last). */
function signedEventText(
  signing: EventSigning,
  where: { id: string; watchId: string; url: string; method: HttpMethod; occurredAt: string },
  content: EventContent,
): string {
  const unsigned = {
    type: 'watch-event',
    id: where.id,
    event: content.event,
    watch_id: where.watchId,
    url: where.url,
    method: where.method,
    occurred_at: where.occurredAt,
    receipt_id: content.receiptId,
    receipt_url: content.receiptId === null ? null : receiptUrlOf(signing.baseUrl, content.receiptId),
    before: content.before,
    after: content.after,
  };
  return signReceiptJson(unsigned, signing.signer()).json;
}
