import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { VerifyReport } from '../ledger/verify';
import type { Finding } from '../ledger/types';
import { DEFAULT_MAX_LINE } from './lines';
import { completeLine, tailSeq } from './last-line';
import { fileRun, folderRun } from './run-names';
import { firstLine, headOfLine } from './read-at';
import { Sequencer, emptyState } from './sequencer';
import { parsedBlocks } from './source';
import { detectText, parseLine } from './parse';
import { ZERO_HASH } from '../../shared/protocol';

/**
 * Verifies a JSONL file without storing anything: the importer's parser and sequencer in verify
 * mode. Chained (ProofLoop-format) runs go through ChainVerifier (seq continuity, digests, prev
 * links, hashes); unchained seed formats get the format and seq checks only (`chained: false`).
 * The file is taken as closed: an unterminated last line is reported as `truncated_line` and, if
 * it still parses, checked as an event too.
 */
export async function verifyFile(file: string, opts: { maxLine?: number } = {}): Promise<VerifyReport[]> {
  const abs = path.resolve(file);
  const size = (await stat(abs)).size;
  const state = emptyState(folderRun(abs.split(path.sep).join('/')));
  const seqr = new Sequencer(state, {
    file: abs,
    resolveRunId: (src) => src,
    mode: 'verify',
    defaultRun: fileRun(abs),
  });
  const maxLine = opts.maxLine ?? DEFAULT_MAX_LINE;
  const first = firstLine(abs, maxLine);
  state.format = first === null ? null : detectText(first);
  let lineNo = 0;
  for await (const b of parsedBlocks(abs, 0, { until: size, maxLine, fmt: state.format })) {
    if (b.t === 'lines') {
      seqr.pushLines(b.results, lineNo);
      lineNo += b.lines;
    } else if (b.t === 'too_long') {
      lineNo += 1;
      seqr.tooLong(lineNo, b.bytes, tailSeq(headOfLine(abs, b.start)));
    } else {
      const complete = b.buf ? completeLine(b.buf, state.format) : null;
      if (complete) {
        // A whole last line without its newline is an event: the file is valid as it is.
        seqr.pushLines([complete], lineNo);
        lineNo += 1;
        continue;
      }
      lineNo += 1;
      const text = b.buf ? b.buf.toString('utf8') : null;
      const parsedAny = text !== null ? parseLine(text, state.format) : null;
      const parsed = parsedAny && parsedAny.t !== 'multi' ? parsedAny : null;
      seqr.finding(
        'truncated_line',
        lineNo,
        parsed && parsed.t === 'ev' ? parsed.seq || null : tailSeq(b.buf),
        `the last line (${b.bytes} bytes) has no newline: cut, or still being written`,
        null,
      );
      if (parsed && parsed.t === 'ev') seqr.push(parsed, lineNo);
    }
  }
  const { findings } = seqr.drain();
  const reports = new Map<string, VerifyReport>();
  for (const [src, run] of Object.entries(state.runs)) {
    const v = seqr.verifiers.get(src);
    reports.set(src, {
      ok: true,
      run_id: src,
      events: seqr.counts.get(src) ?? 0,
      head_seq: run.seq,
      head_hash: run.hash,
      chained: run.fmt === 'proofloop',
      findings: v ? [...v.findings] : [],
    });
  }
  const fallback = state.fileRun ?? state.lastSrc;
  for (const { src, ...f } of findings) {
    const id = src && reports.has(src) ? src : fallback && reports.has(fallback) ? fallback : null;
    let r = id ? reports.get(id) : reports.get('');
    if (!r) {
      r = noRunReport(abs);
      reports.set('', r);
    }
    r.findings.push(f as Finding);
  }
  if (reports.size === 0) reports.set('', noRunReport(abs));
  const out = [...reports.values()];
  for (const r of out) {
    r.findings.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    r.ok = r.findings.length === 0;
  }
  return out;
}

/** The report of a file with no event of any run: named after the file's folder. */
function noRunReport(abs: string): VerifyReport {
  return {
    ok: true,
    run_id: path.basename(path.dirname(abs)) || abs,
    events: 0,
    head_seq: 0,
    head_hash: ZERO_HASH,
    chained: false,
    findings: [],
  };
}
