import { describe, expect, it } from 'vitest';
import { isGap } from '../../renderer/features/timeline/pages';

describe("the timeline's seq gaps (timeline/pages.ts isGap)", () => {
  it('a seq appended after its page was read is pending while the page is read again, not a gap', () => {
    // Page read when the run's head was 10; the run has grown to 11 since.
    expect(isGap(false, 10, 11, 11)).toBe(false);
    expect(isGap(false, 10, 40, 25)).toBe(false);
  });
  it('a seq the page should hold and does not is a gap', () => {
    expect(isGap(false, 10, 11, 7)).toBe(true);
    expect(isGap(false, 10, 10, 10)).toBe(true);
  });
  it('a held seq, a seq past the head and seq 0 are no gap', () => {
    expect(isGap(true, 10, 10, 7)).toBe(false);
    expect(isGap(false, 10, 10, 11)).toBe(false);
    expect(isGap(false, 10, 10, 0)).toBe(false);
  });
});
