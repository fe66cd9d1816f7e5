import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ProofloopService } from '../../electron/service/service';
import { freshFolder } from './helpers/tmp';

describe('artifact.read', () => {
  const f = freshFolder();
  const service = new ProofloopService();
  afterAll(() => {
    service.closeFolder();
    f.cleanup();
  });

  it('returns the full content a tool_returned references, checked against its digest', async () => {
    await service.openFolder(f.dir);
    const { run_id } = await service.invoke('run.start', {
      task_id: 'fix-discount',
      variant: 'careful',
      seed: 1,
    });
    await service.invoke('run.wait', { run_id });
    const { events } = await service.invoke('events.read', { run_id, kinds: ['tool_returned'] });
    const withArtifact = events.find((e) => (e.payload as { artifact?: { digest: string } }).artifact);
    expect(withArtifact, 'a tool_returned with an artifact').toBeDefined();
    const digest = (withArtifact!.payload as { artifact: { digest: string } }).artifact.digest;
    const art = await service.invoke('artifact.read', { run_id, digest });
    expect(art.digest).toBe(digest.replace(/^sha256:/, ''));
    expect(art.text.length).toBeGreaterThan(0);
    expect(art.bytes).toBe(Buffer.byteLength(art.text));

    // Bad arguments and an altered artifact are refused with a clear error.
    const bad = await service.call('artifact.read', { run_id, digest: '../../etc/passwd' }, 'renderer');
    expect(bad).toMatchObject({ ok: false, error: { code: 'bad_args' } });
    writeFileSync(path.join(f.dir, run_id, 'artifacts', art.digest), 'tampered');
    const altered = await service.call('artifact.read', { run_id, digest }, 'renderer');
    expect(altered).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(altered.ok ? '' : altered.error.message).toMatch(/does not match its digest/);
  });
});
