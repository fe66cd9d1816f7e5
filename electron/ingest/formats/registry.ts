import type { FormatAdapter, Json } from './types';
import { proofloopFormat } from './proofloop';
import { seed004Format } from './seed004';
import { seed000Format } from './seed000';
import { claudeCode } from './claude-code';
import { codex } from './codex';
import { inspect } from './inspect';
import { sweAgent } from './swe-agent';
import { atif } from './atif';
import { openHands } from './openhands';
import type { DocumentAdapter } from './types';

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
  inspect,
  seed000Format,
];

/**
 * The formats whose files are one JSON document (or a folder of them), read whole by
 * ../document.ts, asked in this order by the parsed document. A new one is one file in this
 * folder and one line here.
 */
export const DOCUMENT_FORMATS: readonly DocumentAdapter[] = [atif, sweAgent, openHands];

/** The document format whose adapter claims a parsed document, if any. */
export function detectDocument(doc: unknown): DocumentAdapter | undefined {
  return DOCUMENT_FORMATS.find((f) => f.claims(doc));
}

/** Whether the first bytes of a `.json` / `.traj` file may be of a document format. */
export function sniffDocument(head: string): boolean {
  return DOCUMENT_FORMATS.some((f) => f.sniff(head));
}

/**
 * The streamed format (a zip of JSON entries, a JSON value read record by record: FormatAdapter.
 * streamed) whose reader claims a file by its first bytes, if any.
 */
export function detectStreamed(head: Buffer): FormatAdapter | undefined {
  return FORMATS.find((f) => f.streamed?.claims(head) === true);
}

const byName = new Map(FORMATS.map((f) => [f.name, f]));

export function formatNamed(name: string): FormatAdapter | undefined {
  return byName.get(name);
}

/** The format whose adapter claims a file whose first record is `first`, if any. */
export function detectFormat(first: Json): FormatAdapter | undefined {
  return FORMATS.find((f) => f.detect(first));
}

export type {
  DocPart,
  DocumentAdapter,
  FormatAdapter,
  Json,
  MappedEvent,
  MapError,
  SourceRef,
  StreamedRecord,
} from './types';
