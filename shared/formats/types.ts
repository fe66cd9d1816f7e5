/**
 * How a stored event of a source format reads as a protocol v1 payload, on read (the projection,
 * the conversation view, diff). The stored payload stays what the source wrote; a view returns the
 * v1 fields it can read from it and names the ones it had to infer (shown in the payload view).
 * Pure: no Node, no DOM; used by both sides.
 */
import type { SourceRef } from './source-ref';

export interface Interpreted {
  /** The payload as protocol v1 reads it. */
  payload: Record<string, unknown>;
  /** v1 fields not in the source, filled by the view (e.g. `agent` of a seed 000 run_started). */
  inferred: string[];
}

export interface FormatView {
  readonly name: string;
  /** null: the payload is already v1 (ProofLoop's own format), read it as it is. */
  interpret(
    kind: string,
    payload: Record<string, unknown>,
    source: SourceRef | undefined,
    runId: string,
  ): Interpreted | null;
}
