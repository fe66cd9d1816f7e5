import { MAX_DEPTH } from './limits';

/**
 * Whether JSON text nests objects and arrays deeper than `max`, read without parsing and without
 * recursion (brackets inside strings do not count). Text shorter than 2 × max characters cannot
 * hold that many opening brackets, so nearly every line returns at once.
 */
export function depthOverText(text: string, max: number = MAX_DEPTH): boolean {
  if (text.length <= max * 2) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string's contents are passed over with indexOf, not a character at a time: a line of MBs
      // is nearly all string (a base64 image, a tool's output), and the loop spent ~8 ns a
      // character there. Its end is the first quote after an even run of backslashes.
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j === -1) return false; // an unclosed string: no bracket after it counts
        let k = j - 1;
        while (text.charCodeAt(k) === 92) k -= 1;
        if ((j - 1 - k) % 2 === 0) break;
      }
      i = j;
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth -= 1;
  }
  return false;
}

/** Whether a value nests objects and arrays deeper than `max`; iterative, stops at the first too deep. */
export function depthOverValue(value: unknown, max: number = MAX_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (d > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push([c, d + 1]);
  }
  return false;
}
