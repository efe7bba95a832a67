import { describe, expect, it } from 'vitest';
import { badgeState } from '../../../core/badge.ts';
import { createBadgeRenderer } from '../../../io/documents/badge-image.ts';

const NOW = new Date('2026-11-24T12:00:00.000Z');

describe('badge renderer', () => {
  it('draws an SVG named by its words in the state colour, and a PNG of it', async () => {
    const badges = await createBadgeRenderer();
    const green = await badges.svg(
      badgeState({ verdict: 'pay', issued_at: '2026-11-24T11:00:00.000Z', stable_for_days: 3 }, NOW),
    );
    expect(green).toMatch(/^<svg role="img" aria-label="spotcheck: pay · stable 3 days" /);
    expect(green).toContain('<title>spotcheck: pay · stable 3 days</title>');
    expect(green).toContain('#2e7d32');
    const grey = await badges.svg(badgeState(null, NOW));
    expect(grey).toContain('#6b7280');
    expect(grey).not.toContain('#2e7d32');
    const png = await badges.png(badgeState(null, NOW));
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });

  it('gives the same bytes for the same state and different bytes for different words', async () => {
    const badges = await createBadgeRenderer();
    const a = await badges.svg(badgeState(null, NOW));
    expect(await badges.svg(badgeState(null, NOW))).toBe(a);
    const stale = await badges.svg(
      badgeState({ verdict: 'pay', issued_at: '2026-11-01T00:00:00.000Z', stable_for_days: 3 }, NOW),
    );
    expect(stale).not.toBe(a);
  });
});
