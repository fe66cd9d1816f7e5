import { createHash } from 'node:crypto';
import type { Sha256Hex } from '../shared/protocol';

export const sha256Hex: Sha256Hex = (input: string) => createHash('sha256').update(input, 'utf8').digest('hex');

export function sha256Bytes(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}
