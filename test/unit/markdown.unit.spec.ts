import { describe, expect, it } from 'vitest';
import { markdownHtml } from '../../renderer/features/inspector/markdown';

describe('markdownHtml (a payload’s Markdown for reading)', () => {
  it('renders CommonMark and GFM: headings, lists, code, emphasis, tables', () => {
    const html = markdownHtml(
      '# Plan\n\n1. read `price.js`\n2. fix the *sign*\n\n```js\nif (a < b) x();\n```\n\n| a | b |\n| - | - |\n| 1 | 2 |\n',
    );
    expect(html).toContain('<h1>Plan</h1>');
    expect(html).toMatch(
      /<ol>\s*<li>read <code>price.js<\/code><\/li>\s*<li>fix the <em>sign<\/em><\/li>\s*<\/ol>/,
    );
    expect(html).toContain('<pre><code class="language-js">if (a &lt; b) x();');
    expect(html).toMatch(/<table>[\s\S]*<td>1<\/td>[\s\S]*<\/table>/);
  });

  it('keeps raw HTML as text, block and inline', () => {
    const html = markdownHtml(
      '<script>alert(1)</script>\n\nsay <b onmouseover="x()">hi</b> <img src=x onerror=y()>\n',
    );
    expect(html).not.toMatch(/<(script|b|img)\b/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;b onmouseover=&quot;x()&quot;&gt;hi&lt;/b&gt;');
  });

  it('makes an image its alt text: the page asks for nothing', () => {
    const html = markdownHtml('see ![a <chart>](https://example.com/c.png "t") here');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('example.com');
    expect(html).toContain('see a &lt;chart&gt; here');
  });

  it('keeps links with a safe protocol, and shows any other link as its text', () => {
    expect(markdownHtml('[docs](https://example.com/a?b=1&c=2 "the <docs>")')).toContain(
      '<a href="https://example.com/a?b=1&amp;c=2" title="the &lt;docs&gt;" target="_blank" rel="noopener noreferrer">docs</a>',
    );
    expect(markdownHtml('[mail](mailto:a@example.com)')).toContain(
      '<a href="mailto:a@example.com" target="_blank" rel="noopener noreferrer">mail</a>',
    );
    // A bare URL (GFM) is a link too, and a quote in it cannot leave the attribute.
    expect(markdownHtml('see https://example.com/x"onmouseover="y')).not.toContain('" onmouseover');
    for (const href of [
      'javascript:alert(1)',
      'java\tscript:alert(1)',
      'JAVASCRIPT:alert(1)',
      'data:text/html,x',
      'vbscript:x',
      'notes/a.md',
      '/api/runs.list',
    ]) {
      const html = markdownHtml(`[click *me*](<${href}>)`);
      expect(html, href).not.toContain('<a');
      expect(html, href).toContain('click <em>me</em>');
    }
  });
});
