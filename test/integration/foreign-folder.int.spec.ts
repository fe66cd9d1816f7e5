import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { homeForFile } from './helpers/tmp';
import { Ledger } from '../../electron/ledger/ledger';
import { ledgerPath } from '../../electron/ledger/open';
import { claimsFile, firstRecord, isForeignFolder } from '../../electron/ledger/foreign';

const FIX = path.join(__dirname, '../fixtures');
const tmpOf = homeForFile('pl-foreign-');

describe("the ledger of another program's folder", () => {
  it('lives in PROOFLOOP_HOME, keyed by the folder, and nothing is written into the folder', () => {
    const projects = path.join(tmpOf(), 'claude', 'projects');
    cpSync(path.join(FIX, 'claude-code/projects'), projects, { recursive: true });
    expect(isForeignFolder(projects)).toBe(true);
    const file = ledgerPath(projects);
    expect(file.startsWith(path.join(tmpOf(), 'home', 'folders'))).toBe(true);
    const l = Ledger.open(projects);
    l.close();
    expect(existsSync(path.join(projects, '.proofloop'))).toBe(false);
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(path.join(path.dirname(file), 'folder.txt'), 'utf8').trim()).toBe(projects);
    // Found again by the folder's path; another folder gets another ledger.
    expect(ledgerPath(projects)).toBe(file);
    const sessions = path.join(tmpOf(), 'codex', 'sessions');
    cpSync(path.join(FIX, 'codex/sessions'), sessions, { recursive: true });
    expect(ledgerPath(sessions)).not.toBe(file);
    expect(existsSync(path.join(sessions, '.proofloop'))).toBe(false);
  });

  it('a runs folder (events.jsonl, or a file no foreign adapter claims) keeps .proofloop/', () => {
    const runs = path.join(tmpOf(), 'runs');
    cpSync(path.join(FIX, 'claude-code/projects/sample-project'), path.join(runs, 'cc'), { recursive: true });
    writeFileSync(path.join(runs, 'notes.jsonl'), '{"hello":1}\n');
    expect(isForeignFolder(runs)).toBe(false);
    expect(ledgerPath(runs)).toBe(path.join(runs, '.proofloop', 'ledger.db'));
    const empty = path.join(tmpOf(), 'empty');
    cpSync(path.join(FIX, 'seed000'), empty, { recursive: true });
    expect(isForeignFolder(empty)).toBe(false);
  });

  it('claims a file by its first line only', () => {
    const f = path.join(tmpOf(), 'x.jsonl');
    writeFileSync(f, '{"type":"session_meta","timestamp":"t","payload":{"id":"a"}}\n{broken');
    expect(claimsFile(firstRecord(f))?.name).toBe('codex');
    writeFileSync(f, '[1,2]\n');
    expect(claimsFile(firstRecord(f))).toBeNull();
  });
});
