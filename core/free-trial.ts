/**
 * Free-trial headers (docs/api.md §3.1 rule 3; docs/decisions.md "Free-trial headers").
 *
 * x402 has no standard free-trial signal; these are the ad-hoc headers sellers use. A recognized header is a
 * trial announced, unless its value says the trial is over: a count of 0, `used/total` with nothing left, a
 * "used: yes" or a "no" flag. A value that cannot be read (`unlimited`, `n/a`, empty) still announces a trial;
 * only its count is unknown (`remaining: null`). The count is given only when it parses as a whole number.
 */

/**
 * Recognized headers, in the order they are consulted (counts before flags: a count is more specific).
 * The first header whose value is readable decides; when none is readable, the first one present announces a
 * trial with no count.
 */
export const FREE_TRIAL_HEADERS = [
  'x-free-trial-remaining',
  'x-trial-remaining',
  'x-trial-used',
  'x-free-trial',
] as const;

/** A recognized free-trial header name, lower-case. */
export type FreeTrialHeader = (typeof FREE_TRIAL_HEADERS)[number];

/** Plain-words meaning of each header, for the rules document. */
export const FREE_TRIAL_RULES: Record<FreeTrialHeader, string> = {
  'x-free-trial-remaining':
    'Free calls left. A whole number above 0 means a trial is active with that many calls left; 0 means the trial is used up. Any other value (unlimited, n/a, empty) means a trial is active, count unknown.',
  'x-trial-remaining': 'Same meaning as X-Free-Trial-Remaining.',
  'x-trial-used':
    'Free calls used, as "used/total" or "used of total": active with total minus used left while used is below total, used up otherwise. "true" or "yes" alone means the trial is used up. Any other value (a bare count, "no", empty) means a trial is active, count unknown.',
  'x-free-trial':
    'A flag. "false", "0", "no", "off", "inactive", "expired", "ended" or "used" means no trial runs; any other value ("true", "active", "unlimited", empty…) means a trial is active, count unknown.',
};

/**
 * What the headers say about a free trial. `header` is the header that decided, null when none was sent;
 * `remaining` is the count of calls left, null when no header gave one.
 */
export type FreeTrial = { active: boolean; remaining: number | null; header: FreeTrialHeader | null };

/**
 * Reads the free-trial headers of a response. Header names are matched case-insensitively.
 *
 * - `x-free-trial-remaining: 3` (or `x-trial-remaining`) → active, remaining 3; `: 0` → not active, remaining 0.
 * - `x-trial-used: 2/5` or `2 of 5` → active, remaining 3; `5/5` → not active, remaining 0; `true` → not active.
 * - `x-free-trial: true|1|yes|on|active` → active, remaining null; `false|0|no|off|inactive|expired|ended|used` → not active.
 * - Anything else (`unlimited`, `n/a`, `-1`, `1.5`, empty, a bare `x-trial-used: 2`) cannot be read: the next
 *   header is consulted, and when no header can be read the first one sent announces a trial, remaining null.
 * @example detectFreeTrial({ 'x-free-trial-remaining': '3' }) // { active: true, remaining: 3, header: 'x-free-trial-remaining' }
 * @example detectFreeTrial({ 'x-free-trial': 'unlimited' }).remaining // null, with active: true
 */
export function detectFreeTrial(headers: Record<string, string>): FreeTrial {
  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) lower.set(name.toLowerCase(), value);
  let announced: FreeTrialHeader | null = null;
  for (const header of FREE_TRIAL_HEADERS) {
    const raw = lower.get(header);
    if (raw === undefined) continue;
    const reading = READERS[header](raw.trim().toLowerCase());
    if (reading !== null) return { ...reading, header };
    announced ??= header;
  }
  // A trial header was sent and none says whether the trial is over: announced, count unknown. Reading it as no
  // trial would approve paying for what the seller says may be free.
  return { active: announced !== null, remaining: null, header: announced };
}

type Reading = { active: boolean; remaining: number | null } | null;

/** A whole number a receipt can carry exactly; leading zeros allowed. */
function parseCount(value: string): number | null {
  if (!/^[0-9]+$/.test(value)) return null;
  const count = Number(value);
  return Number.isSafeInteger(count) ? count : null;
}

/** `used/total` or `used of total`. */
const USED_OF_TOTAL = /^([0-9]+)\s*(?:\/|of)\s*([0-9]+)$/;
const ON = new Set(['true', '1', 'yes', 'on', 'active']);
const OFF = new Set(['false', '0', 'no', 'off', 'inactive', 'expired', 'ended', 'used']);

function readRemaining(value: string): Reading {
  const remaining = parseCount(value);
  return remaining === null ? null : { active: remaining > 0, remaining };
}

function readUsed(value: string): Reading {
  const match = USED_OF_TOTAL.exec(value);
  const used = match === null ? null : parseCount(match[1]!);
  const total = match === null ? null : parseCount(match[2]!);
  if (used !== null && total !== null) {
    const remaining = Math.max(0, total - used);
    return { active: remaining > 0, remaining };
  }
  // "Used: yes" says the trial is spent. A bare count or "no" does not say how many calls are left.
  if (value === 'true' || value === 'yes') return { active: false, remaining: 0 };
  return null;
}

function readFlag(value: string): Reading {
  if (ON.has(value)) return { active: true, remaining: null };
  if (OFF.has(value)) return { active: false, remaining: null };
  return null;
}

const READERS: Record<FreeTrialHeader, (value: string) => Reading> = {
  'x-free-trial-remaining': readRemaining,
  'x-trial-remaining': readRemaining,
  'x-trial-used': readUsed,
  'x-free-trial': readFlag,
};
