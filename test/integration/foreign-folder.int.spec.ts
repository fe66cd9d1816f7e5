import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../electron/ledger/ledger';
import { ledgerPath } from '../../electron/ledger/open';
import { claimsFile, firstRecord, isForeignFolder } from '../../electron/ledger/foreign';

const FIX = path.join(__dirname, '../fixtures');
let tmp: string;
const prevHome = process.env.PROOFLOOP_HOME;

beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'pl-foreign-'));
  process.env.PROOFLOOP_HOME = path.join(tmp, 'home');
});
afterAll(() => {
  if (prevHome === undefined) delete process.env.PROOFLOOP_HOME;
  else process.env.PROOFLOOP_HOME = prevHome;
  rmSync(tmp, { recursive: true, force: true });
});

describe("the ledger of another program's folder", () => {
  it('lives in PROOFLOOP_HOME, keyed by the folder, and nothing is written into the folder', () => {
    const projects = path.join(tmp, 'claude', 'projects');
    cpSync(path.join(FIX, 'claude-code/projects'), projects, { recursive: true });
    expect(isForeignFolder(projects)).toBe(true);
    const file = ledgerPath(projects);
    expect(file.startsWith(path.join(tmp, 'home', 'folders'))).toBe(true);
    const l = Ledger.open(projects);
    l.close();
    expect(existsSync(path.join(projects, '.proofloop'))).toBe(false);
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(path.join(path.dirname(file), 'folder.txt'), 'utf8').trim()).toBe(projects);
    // Found again by the folder's path; another folder gets another ledger.
    expect(ledgerPath(projects)).toBe(file);
    const sessions = path.join(tmp, 'codex', 'sessions');
    cpSync(path.join(FIX, 'codex/sessions'), sessions, { recursive: true });
    expect(ledgerPath(sessions)).not.toBe(file);
    expect(existsSync(path.join(sessions, '.proofloop'))).toBe(false);
  });

  it('a runs folder (events.jsonl, or a file no foreign adapter claims) keeps .proofloop/', () => {
    const runs = path.join(tmp, 'runs');
    cpSync(path.join(FIX, 'claude-code/projects/sample-project'), path.join(runs, 'cc'), { recursive: true });
    writeFileSync(path.join(runs, 'notes.jsonl'), '{"hello":1}\n');
    expect(isForeignFolder(runs)).toBe(false);
    expect(ledgerPath(runs)).toBe(path.join(runs, '.proofloop', 'ledger.db'));
    const empty = path.join(tmp, 'empty');
    cpSync(path.join(FIX, 'seed000'), empty, { recursive: true });
    expect(isForeignFolder(empty)).toBe(false);
  });

  it('claims a file by its first line only', () => {
    const f = path.join(tmp, 'x.jsonl');
    writeFileSync(f, '{"type":"session_meta","timestamp":"t","payload":{"id":"a"}}\n{broken');
    expect(claimsFile(firstRecord(f))?.name).toBe('codex');
    writeFileSync(f, '[1,2]\n');
    expect(claimsFile(firstRecord(f))).toBeNull();
  });
});
