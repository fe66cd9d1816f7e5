import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './tmp';

/** The real Claude Code session the moved-value cases start from (test/fixtures/README.md). */
const SESSION =
  'test/fixtures/claude-code/projects/-home-marco-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl';

/**
 * Writes `<dir>/session.jsonl`: the real session with its first tool output made larger than an
 * event keeps (ARTIFACT_MIN_CHARS, 64 Ki), so its import moves it to an artifact. Returns that output.
 */
export function writeSessionWithMovedValue(dir: string): string {
  const lines = readFileSync(path.join(repoRoot, SESSION), 'utf8').split('\n').filter(Boolean);
  const at = lines.findIndex((l) => l.includes('"tool_result"'));
  const line = JSON.parse(lines[at]!) as { message: { content: { type: string; content: unknown }[] } };
  const big = Array.from({ length: 3000 }, (_, i) => `row ${i}: ${'x'.repeat(30)}`).join('\n');
  line.message.content.find((c) => c.type === 'tool_result')!.content = big;
  lines[at] = JSON.stringify(line);
  writeFileSync(path.join(dir, 'session.jsonl'), lines.join('\n') + '\n');
  return big;
}
