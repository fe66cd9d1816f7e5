/** Where an imported event came from, beyond its file and line (which the importer records). */
export interface SourceRef {
  /**
   * The index of the part of the record this event names, when one record maps to several events
   * (a Claude Code message with three content blocks: parts 0, 1, 2). Absent for a whole record.
   */
  part?: number;
  /** The source's own ids: uuid, parentUuid, message.id, tool_use_id, call_id, … (strings only). */
  ids?: Record<string, string>;
}
