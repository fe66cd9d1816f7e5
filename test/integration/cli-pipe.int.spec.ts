import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { generateFile } from '../../bench/ingest';
import { BIN, assertBuilt, pl } from './helpers/built-cli';

const root = mkdtempSync(path.join(tmpdir(), 'pl-pipe-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('a reader that stops early (`proofloop events … | head`) ends the command quietly, exit 0', async () => {
  assertBuilt();
  const folder = path.join(root, 'runs');
  generateFile(path.join(folder, 'agent', 'events.jsonl'), 3_000, 'piped');
  const env = { ...process.env, PROOFLOOP_HOME: path.join(root, 'home') };
  expect((await pl(['open', folder], env)).code).toBe(0);
  // Far more output than a pipe holds, and the reader closes it after the first chunk.
  const child = spawn(process.execPath, [BIN, '--folder', folder, 'events', 'piped', '--json'], { env });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
}, 60_000);
