import { useMemo } from 'react';
import { markdownHtml } from './markdown';

/**
 * Apart from ReadableView so that the page loads it when a payload may first show Markdown (it is
 * preloaded once the runs list is drawn), not with the first script.
 */
export default function MarkdownText({ text }: { text: string }) {
  const html = useMemo(() => markdownHtml(text), [text]);
  return <div className="md" dangerouslySetInnerHTML={{ __html: html }} />;
}
