/**
 * Free-trial headers (design.md "Verdicts" rule 3).
 *
 * x402 has no standard free-trial signal (x402-notes §7); these are the ad-hoc headers sellers use. The
 * reading is conservative: a header only counts when its value says clearly whether a trial is running,
 * because a false "trial active" turns a real answer into `recheck`. Unreadable values are ignored.
 */

/**
 * Recognized headers, in the order they are consulted (counts before flags: a count is more specific).
 * The first header whose value is readable decides; later ones are not looked at.
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
    'Free calls left. A whole number above 0 means a trial is active with that many calls left; 0 means the trial is used up.',
  'x-trial-remaining': 'Same meaning as X-Free-Trial-Remaining.',
  'x-trial-used':
    'Free calls used, as "used/total" or "used of total": active with total minus used left while used is below total, used up otherwise. "true" or "yes" alone means the trial is used up; a bare count says nothing about what is left and is ignored.',
  'x-free-trial':
    'A flag. "true", "1", "yes", "on" or "active" means a trial is active (count unknown); "false", "0", "no", "off", "inactive", "expired", "ended" or "used" means it is not.',
};

/** What the headers say about a free trial. `header` is the header that decided, null when none was readable. */
export type FreeTrial = { active: boolean; remaining: number | null; header: FreeTrialHeader | null };

/**
 * Reads the free-trial headers of a response. Header names are matched case-insensitively.
 *
 * - `x-free-trial-remaining: 3` (or `x-trial-remaining`) → active, remaining 3; `: 0` → not active, remaining 0.
 * - `x-trial-used: 2/5` or `2 of 5` → active, remaining 3; `5/5` → not active, remaining 0; `true` → not active.
 * - `x-free-trial: true|1|yes|on|active` → active, remaining null; `false|0|no|off|inactive|expired|ended|used` → not active.
 * - Anything else (`abc`, `-1`, `1.5`, a bare `x-trial-used: 2`) is ignored and the next header is consulted.
 * @example detectFreeTrial({ 'x-free-trial-remaining': '3' }) // { active: true, remaining: 3, header: 'x-free-trial-remaining' }
 */
export function detectFreeTrial(headers: Record<string, string>): FreeTrial {
  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) lower.set(name.toLowerCase(), value);
  for (const header of FREE_TRIAL_HEADERS) {
    const raw = lower.get(header);
    if (raw === undefined) continue;
    const reading = READERS[header](raw.trim().toLowerCase());
    if (reading !== null) return { ...reading, header };
  }
  return { active: false, remaining: null, header: null };
}

type Reading = { active: boolean; remaining: number | null } | null;

/** A small whole number; longer strings are not counts anyone sends and are ignored. */
const COUNT = /^[0-9]{1,9}$/;
/** `used/total` or `used of total`. */
const USED_OF_TOTAL = /^([0-9]{1,9})\s*(?:\/|of)\s*([0-9]{1,9})$/;
const ON = new Set(['true', '1', 'yes', 'on', 'active']);
const OFF = new Set(['false', '0', 'no', 'off', 'inactive', 'expired', 'ended', 'used']);

function readRemaining(value: string): Reading {
  if (!COUNT.test(value)) return null;
  const remaining = Number(value);
  return { active: remaining > 0, remaining };
}

function readUsed(value: string): Reading {
  const match = USED_OF_TOTAL.exec(value);
  if (match !== null) {
    const remaining = Math.max(0, Number(match[2]) - Number(match[1]));
    return { active: remaining > 0, remaining };
  }
  // "Used: yes" says the trial is spent. A bare count or "no" does not say whether any calls are left.
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
