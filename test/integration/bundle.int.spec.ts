import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventDigest } from '../../shared/protocol';
import { sha256Hex } from '../../electron/crypto';
import { Ledger } from '../../electron/ledger';
import { exportBundle, openBundle, previewBundle, verifyBundle } from '../../electron/bundle';
import { storeArtifact } from '../../electron/ledger/artifact-store';
import { ProofloopService } from '../../electron/service/service';
import { main } from '../../electron/cli/main';
import { freshDir, homeIn, readZip, reportContent, simpleRun } from './bundle.helpers';

/** One planted value per detector kind: `secret` is what must vanish, `text` how it appears. */
const PLANTED = [
  {
    rule: 'private_key',
    secret: 'MIIEpAIBAAKCAQEAz9x4kP0pLANTED1x',
    text: '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAz9x4kP0pLANTED1x\nQW5vdGhlcmxpbmU=\n-----END RSA PRIVATE KEY-----',
  },
  { rule: 'aws_access_key_id', secret: 'AKIAQ3PLANTED7EXAMPL', text: 'key AKIAQ3PLANTED7EXAMPL in env' },
  {
    rule: 'github_token',
    secret: 'ghp_PLANTEDa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5',
    text: 'git push with ghp_PLANTEDa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5',
  },
  {
    rule: 'anthropic_api_key',
    secret: 'sk-ant-api03-PLANTEDxyzxyzxyzxyzxyz0123',
    text: 'ANTHROPIC=sk-ant-api03-PLANTEDxyzxyzxyzxyzxyz0123',
  },
  {
    rule: 'openai_api_key',
    secret: 'sk-proj-PLANTEDabcdefabcdefabcdef0123',
    text: 'use sk-proj-PLANTEDabcdefabcdefabcdef0123 now',
  },
  {
    rule: 'sk_api_key',
    secret: 'sk-PLANTED9a8b7c6d5e4f3g2h1i0j',
    text: 'legacy sk-PLANTED9a8b7c6d5e4f3g2h1i0j',
  },
  {
    rule: 'slack_webhook',
    secret: 'services/T0PLANTED/B0PLANTED/xyzPLANTEDwebhook',
    text: 'post to https://hooks.slack.com/services/T0PLANTED/B0PLANTED/xyzPLANTEDwebhook',
  },
  {
    rule: 'slack_token',
    secret: 'xoxb-1234PLANTED-abcdefghijkl',
    text: 'SLACK xoxb-1234PLANTED-abcdefghijkl',
  },
  {
    rule: 'stripe_key',
    secret: 'sk_live_PLANTED4eC39HqLyjWDarjtT1',
    text: 'stripe sk_live_PLANTED4eC39HqLyjWDarjtT1',
  },
  {
    rule: 'google_api_key',
    secret: 'AIzaSyPLANTED-0123456789abcdefghijklmno',
    text: 'maps AIzaSyPLANTED-0123456789abcdefghijklmno',
  },
  {
    rule: 'npm_token',
    secret: 'npm_PLANTEDabcdefghijklmnopqrstuvwxyz01',
    text: '//registry/:_authToken=npm_PLANTEDabcdefghijklmnopqrstuvwxyz01',
  },
  {
    rule: 'jwt',
    secret: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJQTEFOVEVEIn0.PLANTEDsignature_abc',
    text: 'cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJQTEFOVEVEIn0.PLANTEDsignature_abc',
  },
  {
    rule: 'url_password',
    secret: 'PLANTEDhunter2',
    text: 'postgres://admin:PLANTEDhunter2@db.internal:5432/app',
  },
  {
    rule: 'authorization_header',
    secret: 'UExBTlRFRDpwYXNzd29yZA==',
    text: 'Authorization: Basic UExBTlRFRDpwYXNzd29yZA==',
  },
  {
    rule: 'bearer_token',
    secret: 'PLANTEDbearer0123456789',
    text: 'curl -H "x: Bearer PLANTEDbearer0123456789"',
  },
  {
    rule: 'aws_secret_access_key',
    secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiPLANTED0KEY',
    text: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiPLANTED0KEY',
  },
  { rule: 'secret_assignment', secret: 'PLANTEDpassw0rd!', text: 'DB_PASSWORD=PLANTEDpassw0rd!' },
] as const;

/** Share-profile detectors: personal data that the bundle must not carry either. */
const PERSONAL = [
  { rule: 'email', secret: 'planted.person@example.com', text: 'mail planted.person@example.com' },
  { rule: 'ipv4', secret: '203.0.113.77', text: 'connect 203.0.113.77:22' },
  { rule: 'ipv6', secret: '2001:db8:85a3::8a2e:370:7334', text: 'via 2001:db8:85a3::8a2e:370:7334' },
  { rule: 'home_path', secret: 'plantedalice', text: 'open /home/plantedalice/project/x.ts' },
] as const;

const NESTED_KEY_SECRET = 'PLANTED-nested-key-value-77';

const BENIGN = {
  sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  git_sha: '9fceb02d0ae598e95dc970b74767f19372d61af8',
  uuid: '123e4567-e89b-12d3-a456-426614174000',
  words: 'password reset flow and secret sauce',
  version: 'v1.2.3',
  at: '2026-11-29T08:00:00.000Z',
};

/** A run with every planted value in tool outputs, patches, model text and nested payload keys. */
function plantedRun(ledger: Ledger, runId: string): void {
  const w = ledger.writer(runId);
  w.append('run_started', { task_id: 'leaky', goal: 'fix the bug', agent: { name: 'sim', variant: 'leak' } });
  const all = [...PLANTED, ...PERSONAL];
  all.forEach((p, i) => {
    const where = i % 4;
    const call = `c${i}`;
    if (where === 0) {
      // Full tool output goes to an artifact (redacted before it is stored), the event keeps an excerpt.
      const art = storeArtifact(join(ledger.folder, runId), `full output\n${p.text}\n`);
      w.append('tool_invoked', { call_id: call, tool: 'shell', args: { cmd: 'env' } });
      w.append('tool_returned', {
        call_id: call,
        status: 'ok',
        duration_ms: 3,
        excerpt: p.text,
        artifact: { digest: art.digest, bytes: art.bytes, redacted: art.redacted },
      });
    } else if (where === 1) {
      w.append('file_changed', { path: 'src/config.ts', patch: `@@ -1 +1 @@\n-const x = 1;\n+${p.text}\n` });
    } else if (where === 2) {
      w.append('model_responded', { content: p.text, tokens: 12 });
    } else {
      w.append('model_proposed', {
        call_id: call,
        tool: 'http',
        args: { request: { headers: { note: p.text } } },
      });
    }
  });
  w.append('model_proposed', {
    call_id: 'nested',
    tool: 'deploy',
    args: { config: { service: { api_key: NESTED_KEY_SECRET, retries: 3 } } },
  });
  w.append('tool_invoked', { call_id: 'benign', tool: 'git', args: { ...BENIGN } });
  w.append('run_completed', { outcome: 'passed' });
  w.close();
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

let dir: string;
let ledger: Ledger;
let restoreHome: () => void;
beforeEach(() => {
  dir = freshDir();
  restoreHome = homeIn(dir);
  ledger = Ledger.open(join(dir, 'runs'));
});
afterEach(() => {
  ledger.close();
  restoreHome();
});

describe('planted credentials', () => {
  it('reach neither the ledger, its mirror, nor any file of the bundle; look-alikes stay', async () => {
    plantedRun(ledger, 'leaky-1');
    const out = join(dir, 'leaky.zip');
    const r = await exportBundle(ledger, { runIds: ['leaky-1'], out, sign: true });
    ledger.close();
    ledger = Ledger.open(join(dir, 'runs'));

    const stored = filesUnder(join(dir, 'runs')).map((f) => ({
      f,
      text: readFileSync(f).toString('latin1'),
    }));
    expect(stored.some((s) => s.f.endsWith('ledger.db'))).toBe(true);
    expect(stored.some((s) => s.f.endsWith('events.jsonl'))).toBe(true);
    const artifacts = ledger
      .read('leaky-1', { kinds: ['tool_returned'] })
      .map((e) => e.payload.artifact as { digest: string; redacted: boolean });
    expect(artifacts.length).toBeGreaterThan(4);
    // Five credentials were planted in tool outputs (every fourth item); their artifacts are marked redacted.
    expect(artifacts.filter((x) => x.redacted)).toHaveLength(5);
    for (const a of artifacts) {
      expect(stored.some((s) => s.f.endsWith(join('artifacts', a.digest)))).toBe(true);
    }
    for (const p of [...PLANTED, { rule: 'sensitive_key', secret: NESTED_KEY_SECRET }]) {
      for (const s of stored) expect(s.text.includes(p.secret), `${p.rule} in ${s.f}`).toBe(false);
    }

    const entries = await readZip(out);
    expect([...entries.keys()].sort()).toEqual(
      [
        'VERIFY.md',
        'manifest.json',
        'manifest.sig',
        'report.html',
        'runs/001-leaky-1/events.jsonl',
        'runs/001-leaky-1/redactions.txt',
        'runs/001-leaky-1/state.json',
      ].sort(),
    );
    // report.html as the page reads it too: its events are packed (gzip, base64).
    const report = reportContent(entries.get('report.html')!.toString('utf8'));
    const decoded = [...entries, ['report.html events', Buffer.concat(report.events)] as const];
    for (const [name, data] of decoded) {
      const text = data.toString('utf8');
      for (const p of [...PLANTED, ...PERSONAL, { rule: 'sensitive_key', secret: NESTED_KEY_SECRET }]) {
        expect(text.includes(p.secret), `${p.rule} in ${name}`).toBe(false);
      }
    }
    // The credential rules fired at append time already; the share profile adds personal data.
    const rules = r.manifest.redaction.rules;
    for (const p of PERSONAL) expect(rules[p.rule], p.rule).toBeGreaterThan(0);

    const lines = entries.get('runs/001-leaky-1/events.jsonl')!.toString('utf8').trim().split('\n');
    const benign = lines.map((l) => JSON.parse(l)).find((e) => e.payload.call_id === 'benign');
    expect(benign.payload.args).toEqual(BENIGN);
    expect(benign.digest).toBeUndefined();

    const v = await verifyBundle(out);
    expect(v).toMatchObject({
      ok: true,
      integrity: 'ok',
      completeness: 'ok',
      signature: 'valid',
      first_failure: null,
    });
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    expect(manifest.runs[0].head_hash).toBe(ledger.run('leaky-1')!.head_hash);
  });
});

describe('export', () => {
  it('reproduces the original head hash with redacted lines carrying their digest', async () => {
    simpleRun(ledger, 'r1');
    const out = join(dir, 'b.zip');
    const r = await exportBundle(ledger, { runIds: ['r1'], out });
    const run = ledger.run('r1')!;
    expect(r.manifest.runs[0]).toMatchObject({
      events: 20,
      first_seq: 1,
      last_seq: 20,
      head_hash: run.head_hash,
    });
    const entries = await readZip(out);
    const lines = entries.get('runs/001-r1/events.jsonl')!.toString('utf8').trim().split('\n');
    const redacted = lines.map((l) => JSON.parse(l)).filter((e) => e.digest);
    expect(redacted.length).toBeGreaterThan(0);
    for (const e of redacted) {
      expect(JSON.stringify(e.payload)).toMatch(/\[REDACTED:email#\d+\]/);
      expect(e.digest).toBe(
        ledger.event('r1', e.seq)!.hash === e.hash ? eventDigest(ledger.event('r1', e.seq)!, sha256Hex) : '',
      );
    }
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    for (const [name, meta] of Object.entries(manifest.files) as [
      string,
      { sha256: string; bytes: number },
    ][]) {
      expect(sha256Hex(entries.get(name)!.toString('utf8')), name).toBe(meta.sha256);
    }
    expect(manifest.signer).toBeNull();
    expect(JSON.stringify(manifest)).not.toContain('example.org');
    const verdict = await verifyBundle(out);
    expect(verdict).toMatchObject({
      ok: true,
      integrity: 'ok',
      completeness: 'unknown',
      signature: 'absent',
    });
    expect(verdict.findings.map((f) => f.code)).toContain('completeness_unproven');
  });

  it('gives the same value the same placeholder across runs of one bundle', async () => {
    const w1 = ledger.writer('a');
    w1.append('model_responded', { content: 'ask dave@example.net' });
    w1.close();
    const w2 = ledger.writer('b');
    w2.append('model_responded', { content: 'dave@example.net again, and erin@example.net' });
    w2.close();
    const out = join(dir, 'p.zip');
    await exportBundle(ledger, { runIds: ['a', 'b'], out });
    const entries = await readZip(out);
    const a = entries.get('runs/001-a/events.jsonl')!.toString();
    const b = entries.get('runs/002-b/events.jsonl')!.toString();
    expect(a).toContain('[REDACTED:email#1]');
    expect(b).toContain('[REDACTED:email#1] again, and [REDACTED:email#2]');
  });

  it('previews counts per rule and the seqs concerned without writing', () => {
    simpleRun(ledger, 'r1');
    const p = previewBundle(ledger, ['r1'], 'share');
    expect(p.rules.email).toBe(6);
    expect(p.runs[0]).toMatchObject({ run_id: 'r1', events: 20, redacted_events: 6, seqs_truncated: false });
    expect(p.runs[0]!.seqs).toEqual([3, 6, 9, 12, 15, 18]);
    expect(previewBundle(ledger, ['r1'], 'credentials').events_redacted).toBe(0);
    expect(readdirSync(dir).filter((f) => f.endsWith('.zip'))).toEqual([]);
  });

  it('report.html holds every events.jsonl as the zip deflates it (gzip, base64) and is stored', async () => {
    simpleRun(ledger, 'r1', 300);
    simpleRun(ledger, 'r2', 2);
    simpleRun(ledger, 'r3', 40, '</script><!--');
    const out = join(dir, 'report.zip');
    const r = await exportBundle(ledger, { runIds: ['r1', 'r2', 'r3'], out });
    const entries = await readZip(out);
    const html = entries.get('report.html')!.toString('utf8');
    const { data, events } = reportContent(html);
    expect(events).toEqual(r.manifest.runs.map((run) => entries.get(`${run.dir}/events.jsonl`)));
    expect(data).toMatchObject({
      runs: [
        { run_id: 'r1', count: 300 },
        { run_id: 'r2', count: 2 },
        { run_id: 'r3', count: 40, state: { status: 'completed' } },
      ],
    });
    // No event text in the page as it is, nor anything that ends a script block early.
    expect(html).not.toContain('tokens_before');
    expect(html.match(/<\/script>/g)).toHaveLength(5);
    // Stored, not deflated again (method 0 in the central directory); it verifies.
    const zip = readFileSync(out);
    const at = zip.lastIndexOf(Buffer.from('report.html')) - 46;
    expect(zip.readUInt32LE(at)).toBe(0x02014b50);
    expect(zip.readUInt16LE(at + 10)).toBe(0);
    expect(zip.readUInt32LE(at + 20)).toBe(zip.readUInt32LE(at + 24));
    expect(await verifyBundle(out)).toMatchObject({ ok: true, integrity: 'ok' });
  });

  it('refuses to leave a bundle in which a detector still fires, and leaves no partial file', async () => {
    // A run id is not payload: the redactor does not touch it, the output scan catches it.
    const w = ledger.writer('AKIAQ3PLANTED7EXAMPL');
    w.append('run_completed', { outcome: 'passed' });
    w.close();
    const out = join(dir, 'leak.zip');
    await expect(exportBundle(ledger, { runIds: ['AKIAQ3PLANTED7EXAMPL'], out })).rejects.toThrow(
      /detector still fires.*aws_access_key_id/,
    );
    expect(readdirSync(dir).filter((f) => f.startsWith('leak.zip'))).toEqual([]);
  });

  it('refuses to replace a file unless forced (and then only an earlier bundle), and an unknown run', async () => {
    simpleRun(ledger, 'r1');
    const out = join(dir, 'x.zip');
    writeFileSync(out, 'keep me');
    await expect(exportBundle(ledger, { runIds: ['r1'], out })).rejects.toThrow(/exists/);
    expect(readFileSync(out, 'utf8')).toBe('keep me');
    await expect(exportBundle(ledger, { runIds: ['nope'], out: join(dir, 'y.zip') })).rejects.toThrow(
      /no run "nope"/,
    );
    // force replaces only an earlier bundle, never another file.
    await expect(exportBundle(ledger, { runIds: ['r1'], out, force: true })).rejects.toThrow(
      /not an audit bundle/,
    );
    expect(readFileSync(out, 'utf8')).toBe('keep me');
    const earlier = join(dir, 'earlier.zip');
    await exportBundle(ledger, { runIds: ['r1'], out: earlier });
    await exportBundle(ledger, { runIds: ['r1'], out: earlier, force: true });
    expect((await verifyBundle(earlier)).ok).toBe(true);
  });

  it('creates the signing key on first use, readable by the owner only', async () => {
    simpleRun(ledger, 'r1');
    await exportBundle(ledger, { runIds: ['r1'], out: join(dir, 's.zip'), sign: true });
    const keyDir = join(dir, 'home', 'keys');
    expect(statSync(join(keyDir, 'bundle-signing.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(keyDir, 'bundle-signing.pub'), 'utf8')).toMatch(/BEGIN PUBLIC KEY/);
    const v = await verifyBundle(join(dir, 's.zip'), { key: join(keyDir, 'bundle-signing.pub') });
    expect(v).toMatchObject({ ok: true, signature: 'valid', completeness: 'ok', signer: { pinned: true } });
  });
});

describe('open', () => {
  it('imports the runs read-only with the verdict in meta, and suffixes a taken id', async () => {
    simpleRun(ledger, 'r1');
    const out = join(dir, 'b.zip');
    await exportBundle(ledger, { runIds: ['r1'], out, sign: true });
    const other = Ledger.open(join(dir, 'other'));
    try {
      const r = await openBundle(other, out);
      expect(r.run_ids).toEqual(['r1']);
      const run = other.run('r1')!;
      expect(run).toMatchObject({
        source: 'bundle',
        head_seq: 20,
        head_hash: ledger.run('r1')!.head_hash,
        status: 'completed',
      });
      const meta = JSON.parse(
        (other.db.prepare('SELECT meta FROM runs WHERE run_id = ?').get('r1') as { meta: string }).meta,
      );
      expect(meta.bundle.verdict).toMatchObject({ ok: true, integrity: 'ok', signature: 'valid' });
      const e3 = other.event('r1', 3)!;
      expect(e3.redacted).toBe(true);
      expect(JSON.stringify(e3.payload)).toContain('[REDACTED:email#');
      expect(() => other.writer('r1')).toThrow(/read-only/);
      expect((await openBundle(other, out)).run_ids).toEqual(['r1']);
    } finally {
      other.close();
    }
    const again = await openBundle(ledger, out);
    expect(again.run_ids[0]).toMatch(/^r1:bundle-[0-9a-f]{10}$/);
  });

  it('works from the CLI and through the service, inside the folder only', async () => {
    simpleRun(ledger, 'r1');
    ledger.close();
    const runs = join(dir, 'runs');
    // No mkdir: `open <bundle>` creates the folder it opens into, as `open <folder>` does.
    const writes: string[] = [];
    const orig = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((s: string) => (writes.push(String(s)), true)) as typeof process.stdout.write;
    let codes: number[] = [];
    try {
      process.exitCode = 0;
      codes.push(await main(['--folder', runs, 'export', 'r1', '--out', join(dir, 'cli.zip'), '--sign']));
      process.exitCode = 0;
      codes.push(await main(['--folder', runs, '--json', 'verify-bundle', join(dir, 'cli.zip')]));
      process.exitCode = 0;
      codes.push(await main(['--folder', join(dir, 'viewer'), 'open', join(dir, 'cli.zip')]));
      // --preview writes nothing and so needs no --out; an export does.
      process.exitCode = 0;
      codes.push(await main(['--folder', runs, 'export', 'r1', '--preview']));
      process.exitCode = 0;
      codes.push(await main(['--folder', runs, 'export', 'r1']));
      // The run opened from the bundle holds redacted events: nothing new to redact, and it says so.
      const bundleRun = /read-only in .*: runs? (\S+)/.exec(writes.join(''))![1]!;
      process.exitCode = 0;
      codes.push(await main(['--folder', join(dir, 'viewer'), 'export', bundleRun, '--preview']));
    } finally {
      process.stdout.write = orig;
      process.exitCode = 0;
    }
    expect(codes).toEqual([0, 0, 0, 0, 2, 0]);
    expect(writes.at(-1)).toMatch(
      /^profile share: nothing more to redact; \d+ events were already redacted and go out as they are/,
    );
    expect(writes[3]).toMatch(/^profile share: \d+ events would be redacted/);
    // The signed export says which file a reviewer needs for `verify-bundle --key`, and it is there.
    const keyFile = /public key (\S+): give it to the reviewer for verify-bundle --key/.exec(writes[0]!)?.[1];
    expect(keyFile).toMatch(/bundle-signing\.pub$/);
    expect(readFileSync(keyFile!, 'utf8')).toContain('BEGIN PUBLIC KEY');
    const json = JSON.parse(writes[1]!);
    expect(json).toMatchObject({ ok: true, integrity: 'ok', signature: 'valid' });
    expect(writes.join('')).toContain('opened');
    expect(existsSync(join(dir, 'viewer', '.proofloop', 'ledger.db'))).toBe(true);

    const svc = new ProofloopService();
    await svc.openFolder(runs);
    try {
      const preview = await svc.invoke('bundle.preview', { run_ids: ['r1'] });
      expect(preview.rules.email).toBe(6);
      const bad = await svc.call('bundle.export', { run_ids: ['r1'], out: join(dir, 'outside.zip') });
      expect(bad).toMatchObject({ ok: false, error: { code: 'forbidden_path' } });
      const exported = await svc.invoke('bundle.export', { run_ids: ['r1'], out: 'inside.zip' });
      expect(exported.manifest.runs[0]!.events).toBe(20);
      const v = await svc.invoke('bundle.verify', { file: 'inside.zip' });
      expect(v.integrity).toBe('ok');
      expect(await svc.invoke('bundle.info', { run_id: 'r1' })).toBeNull();
      const opened = await svc.invoke('bundle.open', { file: 'inside.zip' });
      expect(opened.run_ids[0]).toMatch(/^r1:bundle-/);
      const info = await svc.invoke('bundle.info', { run_id: opened.run_ids[0]! });
      expect(info).toMatchObject({
        run_id: 'r1',
        renamed_from: 'r1',
        verdict: { integrity: 'ok', signature: 'absent' },
      });
      // Stored under a new id, its digests still cover r1: the ledger's own chain check says so.
      const checked = await svc.invoke('run.verify', { run_id: opened.run_ids[0]! });
      expect(checked).toMatchObject({ ok: true, events: 20, findings: [] });
      const outside = await svc.call('bundle.verify', { file: '../cli.zip' });
      expect(outside).toMatchObject({ ok: false, error: { code: 'forbidden_path' } });
    } finally {
      svc.closeFolder();
    }
    codes = [];
    ledger = Ledger.open(runs);
  });
});
