/**
 * The redaction engine's entry for the ledger: credentials are replaced before anything is
 * appended. Placeholder until the detectors land (issue 6): it returns the payload unchanged.
 */
export function redactCredentials<T>(value: T): { value: T; hits: number } {
  return { value, hits: 0 };
}
