/**
 * Hosted usage made durable through the journal (docs/api.md §5.4; the same promise as the free quota): each hosted use is
 * journaled before its answer leaves, as the attachment of the answer's receipt record (one record, one fsync), or
 * as a record of its own when the call issued no receipt. The integrator store keeps a snapshot of the counts with
 * the journal cursor it covers; {@link compactUsage} folds the uses after that cursor into it, in one transaction,
 * so replaying the journal tail after a SIGKILL neither loses nor doubles a use.
 */
import type { HostedUse } from '../../core/hosted-meter.ts';
import { type IntegratorStore, slotKey, type UsageDelta } from '../integrators/port.ts';
import type { Journal, JournalPosition, ReadOptions } from '../receipts/journal.ts';
import type { HostedMeter } from './memory.ts';

/** The journal record of one hosted use. */
export type HostedUseRecord = {
  v: 1;
  kind: 'hosted_use';
  month: string;
  integrator: string;
  key: string;
  end_user: string | null;
  receipt: string | null;
};

/**
 * Reads journal records after `since`: `journal.replay` in the server, `readJournal` in a CLI. With `match`, a record
 * whose line lacks it is visited as `null`, unparsed.
 */
export type JournalTail = (
  visit: (record: unknown, position: JournalPosition) => void,
  options: ReadOptions,
) => Promise<void>;

/** What every line holding a hosted use has, alone or attached to a receipt: its kind as `JSON.stringify` writes it. */
const HOSTED_USE_LINE = '"kind":"hosted_use"';

/**
 * The record of one use: journaled alone, or attached to its receipt's record. `receipt` is null in both: an
 * attached use is inside its receipt's record, and a use journaled alone had no receipt (older journals may name one).
 */
export function hostedUseRecord(use: HostedUse, keyId: string): HostedUseRecord {
  return {
    v: 1,
    kind: 'hosted_use',
    month: use.month,
    integrator: use.integrator,
    key: keyId,
    end_user: use.endUser,
    receipt: null,
  };
}

/** Durably records a use that has no receipt; resolves once the journal batch holding it is on disk. */
export async function recordHostedUse(
  journal: Pick<Journal, 'append'>,
  use: HostedUse,
  keyId: string,
): Promise<void> {
  await journal.append(hostedUseRecord(use, keyId));
}

/**
 * Folds the journal's hosted uses after the snapshot's cursor into the snapshot; returns how many (0 when a
 * concurrent fold moved the cursor first: those uses are in the snapshot once, by that fold).
 */
export async function compactUsage(store: IntegratorStore, tail: JournalTail): Promise<number> {
  const since = await store.usageCursor();
  const delta: UsageDelta = { calls: new Map(), endUsers: new Map() };
  let last: string | null = since;
  let folded = 0;
  await tail(
    (value, position) => {
      last = position.cursor;
      const record = isHostedUse(value) ? value : attachedUse(value);
      if (record === null) return;
      folded++;
      const slot = slotKey(record.integrator, record.month);
      delta.calls.set(slot, (delta.calls.get(slot) ?? 0) + 1);
      if (record.end_user !== null) {
        const user = slotKey(record.integrator, record.month, record.end_user);
        delta.endUsers.set(user, (delta.endUsers.get(user) ?? 0) + 1);
      }
    },
    // Every minute under load, the tail is a minute of receipts: only the lines with a use are parsed.
    since === null ? { match: HOSTED_USE_LINE } : { since, match: HOSTED_USE_LINE },
  );
  if (last === null || last === since) return 0;
  return (await store.foldUsage(delta, since, last)) ? folded : 0;
}

/** Loads the snapshot into the meter (start-up, after {@link compactUsage}); `month` limits it to one month. */
export async function loadMeter(store: IntegratorStore, meter: HostedMeter, month?: string): Promise<void> {
  for (const row of await store.usage(month === undefined ? {} : { month })) {
    meter.restore(row.month, row.integrator, row.calls, await store.endUserHashes(row.integrator, row.month));
  }
}

/** The hosted use a ledger record (a receipt's) carries as its attachment (`IssueMeta['attached']`), or null. */
function attachedUse(record: unknown): HostedUseRecord | null {
  if (typeof record !== 'object' || record === null) return null;
  const { attached } = record as { attached?: unknown };
  return isHostedUse(attached) ? attached : null;
}

function isHostedUse(record: unknown): record is HostedUseRecord {
  const r = record as Partial<HostedUseRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    r.kind === 'hosted_use' &&
    typeof r.integrator === 'string' &&
    typeof r.month === 'string' &&
    (r.end_user === null || typeof r.end_user === 'string')
  );
}
