// The README and docs/ are read by people who cloned the repository and nothing else: every
// relative link in them must reach a file or folder inside it (issue 24: the README linked
// ../shared/DESIGN.md, which a clone does not have).
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { Lexer, walkTokens, type Token } from 'marked';
import { describe, expect, it } from 'vitest';

const root = realpathSync(path.resolve(import.meta.dirname, '../..'));

function markdownFiles(): string[] {
  const docs = path.join(root, 'docs');
  const inDocs = existsSync(docs)
    ? readdirSync(docs)
        .filter((f) => f.endsWith('.md'))
        .map((f) => path.join(docs, f))
    : [];
  return [path.join(root, 'README.md'), path.join(root, 'test/fixtures/README.md'), ...inDocs];
}

/** Every link and image target of a Markdown text, as the lexer reads it (code spans are not links). */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  walkTokens(Lexer.lex(markdown), (t: Token) => {
    if ((t.type === 'link' || t.type === 'image') && typeof t.href === 'string') targets.push(t.href);
  });
  return targets;
}

/** Where a relative target points, or null for targets that are not files of the repository. */
function localTarget(file: string, href: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('//')) return null;
  const bare = decodeURIComponent(href.split('#')[0]!.split('?')[0]!);
  return path.resolve(path.dirname(file), bare);
}

describe('links of the README and docs/', () => {
  it('finds links as the Markdown lexer does, not inside code', () => {
    expect(
      linkTargets('see [a](docs/a.md) and `[b](../out.md)`\n\n```\n[c](x.md)\n```\n![i](p.png)'),
    ).toEqual(['docs/a.md', 'p.png']);
  });

  it('the README links the architecture in docs/', () => {
    const targets = linkTargets(readFileSync(path.join(root, 'README.md'), 'utf8'));
    expect(targets).toContain('docs/architecture.md');
  });

  for (const file of markdownFiles().filter((f) => existsSync(f))) {
    it(`every relative link of ${path.relative(root, file)} resolves inside the repository`, () => {
      const bad: string[] = [];
      for (const href of linkTargets(readFileSync(file, 'utf8'))) {
        const target = localTarget(file, href);
        if (target === null) continue;
        const inside = target === root || target.startsWith(root + path.sep);
        if (!inside || !existsSync(target))
          bad.push(`${href} (${inside ? 'missing' : 'outside the repository'})`);
      }
      expect(bad).toEqual([]);
    });
  }
});
