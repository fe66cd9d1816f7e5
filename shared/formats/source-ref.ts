/** Where an imported event came from, beyond its file and line (which the importer records). */
export interface SourceRef {
  /**
   * The index of the part of the record this event names, when one record maps to several events
   * (a Claude Code message with three content blocks: parts 0, 1, 2). Absent for a whole record.
   */
  part?: number;
  /** The source's own ids: uuid, parentUuid, message.id, tool_use_id, call_id, … (strings only). */
  ids?: Record<string, string>;
  /**
   * Values of the record too large to store in the event (electron/ingest/outline.ts): each was
   * replaced in the stored payload by its first bytes and a note, and stored whole (redacted) as
   * the artifact of this digest.
   */
  artifacts?: MovedValue[];
}

/** One value of a record moved to an artifact: where it was, the artifact's sha256, its size. */
export interface MovedValue {
  /** The JSON path of the value in the payload (keys and array indices). */
  path: (string | number)[];
  digest: string;
  bytes: number;
}
