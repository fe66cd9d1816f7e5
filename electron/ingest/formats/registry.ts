import type { FormatAdapter, Json } from './types';
import { proofloopFormat } from './proofloop';
import { seed004Format } from './seed004';
import { seed000Format } from './seed000';
import { claudeCode } from './claude-code';
import { codex } from './codex';

/**
 * Every format the importer reads, in the order they are asked to claim a file by its first
 * record. A new format is one file in this folder and one line here. seed000 claims any record with
 * a seq or a kind, so it stays last.
 */
export const FORMATS: readonly FormatAdapter[] = [
  proofloopFormat,
  seed004Format,
  claudeCode,
  codex,
  seed000Format,
];

const byName = new Map(FORMATS.map((f) => [f.name, f]));

export function formatNamed(name: string): FormatAdapter | undefined {
  return byName.get(name);
}

/** The format whose adapter claims a file whose first record is `first`, if any. */
export function detectFormat(first: Json): FormatAdapter | undefined {
  return FORMATS.find((f) => f.detect(first));
}

export type { FormatAdapter, Json, MappedEvent, MapError, SourceRef } from './types';
