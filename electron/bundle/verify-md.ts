import type { BundleManifest } from './format';

/** VERIFY.md: how to check the bundle, with ProofLoop or by hand. */
export function verifyMarkdown(m: BundleManifest): string {
  const runs = m.runs
    .map(
      (r) =>
        `| ${r.run_id} | ${r.events} | ${r.first_seq}–${r.last_seq} | \`${r.head_hash}\` | ${r.redacted_events} |`,
    )
    .join('\n');
  return `# How to verify this bundle

Made by ProofLoop ${m.app.version} on ${m.created_at}, redaction profile \`${m.profile}\`,
${m.signer ? `signed with the Ed25519 key \`${m.signer.fingerprint}\`` : 'not signed'}.

    proofloop verify-bundle <this file> [--key <signer's public key .pem>] [--json]

It reports two verdicts apart: **integrity** (nothing was altered) and **completeness** (nothing is
missing), plus the signature's, and names the first run and seq that fail.

| run | events | seqs | head hash | redacted events |
| --- | --- | --- | --- | --- |
${runs}

## By hand
1. \`manifest.json\` lists every other entry with its sha256; the zip holds nothing else (but
   \`manifest.sig\`).
2. Each line of \`runs/*/events.jsonl\` is one event. Its digest is
   \`sha256(RFC 8785 canonical JSON of {seq, run_id, kind, v, at, payload})\` (lowercase hex), or, for
   a redacted event, the \`digest\` field it carries (the digest of the original, unredacted event).
   \`hash = sha256(prev + digest)\` over the two hex strings; \`prev\` of seq 1 is 64 zeros and every other
   \`prev\` is the \`hash\` of the line before. Seqs run 1, 2, 3… without a gap.
3. \`runs/*/redactions.txt\` lists \`<seq> <sha256 of the exact line>\` for every redacted line: the
   chain covers a redacted event's original digest, this list covers its redacted text.
4. The last hash of each run is its head hash in the manifest; the count and the first and last seq
   match too.
5. A chain alone cannot show that the tail was cut off, and anyone can recompute an unkeyed chain:
   only a signature (\`manifest.sig\`: Ed25519 over the exact bytes of \`manifest.json\`, base64) by a
   key you trust seals the counts and head hashes, and so proves completeness.

Placeholders \`[REDACTED:<rule>#<n>]\` stand for removed values; the same value has the same
placeholder throughout this bundle. The manifest counts replacements per rule, never the values.
\`report.html\` shows the runs in a browser, offline (one recent enough to unpack the events it
carries: Chromium 80, Firefox 113, Safari 16.4 or later); it does not verify anything itself.
`;
}
