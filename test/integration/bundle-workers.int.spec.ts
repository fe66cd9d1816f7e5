import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../electron/ledger';
import { exportBundle, verifyBundle } from '../../electron/bundle';
import { freshDir, homeIn, readZip, simpleRun } from './bundle.helpers';

// The exporter's worker threads (readers, scan, fold) and its in-thread path must give the very
// same bytes: chunks meet at 5,000 events, so 12,000 events cross two boundaries, and one event in
// three carries an e-mail address (redacted in order, placeholders numbered across chunks).
describe('export with worker threads', () => {
  let dir: string;
  let restoreHome: () => void;
  beforeEach(() => {
    dir = freshDir();
    restoreHome = homeIn(dir);
  });
  afterEach(() => restoreHome());

  it('writes the same bundle as the in-thread path, and it verifies', async () => {
    const ledger = Ledger.open(join(dir, 'runs'));
    try {
      simpleRun(ledger, 'big', 12_000);
      simpleRun(ledger, 'small', 30, 'x');
      const now = () => '2026-11-29T12:00:00.000Z';
      const opts = { runIds: ['big', 'small'], profile: 'share' as const, sign: true, now };
      const a = await exportBundle(ledger, { ...opts, out: join(dir, 'a.zip'), workers: 0 });
      const b = await exportBundle(ledger, { ...opts, out: join(dir, 'b.zip'), workers: 2 });
      expect(b.manifest).toEqual(a.manifest);
      expect(a.manifest.redaction.events_redacted).toBeGreaterThan(3000);
      expect(readFileSync(b.file).equals(readFileSync(a.file))).toBe(true);
      const v = await verifyBundle(b.file);
      expect(v.integrity).toBe('ok');
      expect(v.runs.map((r) => r.events)).toEqual([12_000, 30]);
      const entries = await readZip(b.file);
      const lines = entries.get('runs/001-big/events.jsonl')!.toString('utf8').split('\n');
      expect(lines).toHaveLength(12_001);
      // The numbering runs on across chunks: the last address seen is a high number.
      const numbers = lines.flatMap((l) =>
        [...l.matchAll(/\[REDACTED:email#(\d+)\]/g)].map((m) => Number(m[1])),
      );
      expect(Math.max(...numbers)).toBeGreaterThan(3000);
      const state = JSON.parse(entries.get('runs/001-big/state.json')!.toString('utf8'));
      expect(state.seq).toBe(12_000);
      expect(state.status).toBe('completed');
    } finally {
      ledger.close();
    }
  }, 120_000);
});
