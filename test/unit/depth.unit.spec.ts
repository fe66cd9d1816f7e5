import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { depthOverText } from '../../shared/protocol/depth';

/** The reading depthOverText must keep: one character at a time, a backslash escaping the next. */
function reference(text: string, max: number): boolean {
  // Too short to open max + 1 brackets and close them (JSON text that does not is refused by JSON.parse).
  if (text.length <= max * 2) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (++depth > max) return true;
    } else if (c === '}' || c === ']') depth -= 1;
  }
  return false;
}

describe('depthOverText', () => {
  it('agrees with a character-at-a-time reading on text of brackets, quotes and backslashes', () => {
    const piece = fc.constantFrom('{', '}', '[', ']', '"', '\\', '\\\\', '\\"', 'a', ':', ',', 'xyz');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 200 }), fc.integer({ min: 0, max: 6 }), (parts, max) => {
        const text = parts.join('');
        expect(depthOverText(text, max)).toBe(reference(text, max));
      }),
      { numRuns: 5000 },
    );
  });

  it('counts no bracket inside a string, however long, and ends the string at the right quote', () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const long = 'A'.repeat(1 << 20);
    // Brackets in a long string: not nesting.
    expect(depthOverText(`{"data":"${long}${deep(300)}${long}"}`, 256)).toBe(false);
    // After the string, they are.
    expect(depthOverText(`{"data":"${long}","x":${deep(300)}}`, 256)).toBe(true);
    // An escaped quote does not end the string; an escaped backslash before a quote does not escape it.
    expect(depthOverText(`["${long}\\"${deep(300)}"]`, 256)).toBe(false);
    expect(depthOverText(`["${long}\\\\",${deep(300)}]`, 256)).toBe(true);
    expect(depthOverText(`["${long}\\\\\\"${deep(300)}"]`, 256)).toBe(false);
    // A string never closed hides the rest.
    expect(depthOverText(`["${long}${deep(300)}`, 256)).toBe(false);
    // Exactly at the bound is allowed, one over is not.
    expect(depthOverText(`${'['.repeat(256)}"${long}"${']'.repeat(256)}`, 256)).toBe(false);
    expect(depthOverText(`${'['.repeat(257)}"${long}"${']'.repeat(257)}`, 256)).toBe(true);
  });
});
