import { describe, expect, it } from 'vitest';
import { createPushGap } from '../../renderer/api/pushGap.js';

/** Answers calls with the given counts, in order. */
function answered(counts: (string | null)[]) {
  const gap = createPushGap();
  for (const c of counts) gap.began()(c);
  return gap;
}

describe('pushGap (does the push stream’s first connection call for reading again?)', () => {
  it('not when every read began after the pushes the stream missed', () => {
    expect(answered(['s1.0', 's1.0']).missed('s1.0')).toBe(false);
    // A read that began later than the stream listened saw even more.
    expect(answered(['s1.3', 's1.4']).missed('s1.3')).toBe(false);
  });

  it('when a push went out after one of the reads began and before the stream listened', () => {
    expect(answered(['s1.0', 's1.1']).missed('s1.1')).toBe(true);
    expect(answered(['s1.2']).missed('s1.5')).toBe(true);
  });

  it('when it cannot tell: no read answered, a read failed, another server, a count unreadable', () => {
    expect(createPushGap().missed('s1.0')).toBe(true);
    expect(answered(['s1.0', null]).missed('s1.0')).toBe(true);
    expect(answered(['s1.0']).missed('s2.0')).toBe(true);
    expect(answered(['s1.0', 's2.0']).missed('s1.0')).toBe(true);
    expect(answered(['s1.0']).missed('')).toBe(true);
    expect(answered(['garbage']).missed('s1.0')).toBe(true);
  });

  it('takes a call’s answer once', () => {
    const gap = createPushGap();
    const done = gap.began();
    done('s1.0');
    done(null); // a second answer to the same call is not news that it failed
    gap.began()('s1.2');
    expect(gap.missed('s1.0')).toBe(false);
    expect(gap.missed('s1.1')).toBe(true);
  });

  it('says when every call begun so far is answered', async () => {
    const gap = createPushGap();
    const first = gap.began();
    const second = gap.began();
    let settled = false;
    void gap.answered().then(() => (settled = true));
    first('s1.0');
    await Promise.resolve();
    expect(settled).toBe(false);
    second(null);
    await new Promise((r) => setTimeout(r, 0));
    expect(settled).toBe(true);
    await expect(createPushGap().answered()).resolves.toBeUndefined();
  });
});
