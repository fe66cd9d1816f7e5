import Markdown from 'react-markdown';

// Markdown as React elements: raw HTML in the source stays text (no rehype-raw), images are not
// fetched (the CSP forbids other origins, and a payload must not make the page ask for anything).
const NO_IMAGES = ['img'];

/**
 * Apart from ReadableView so that the page loads it when a payload first shows Markdown: with
 * react-markdown's parser (~100 KB, and tables built when its modules load) in the first script,
 * the page took longer to load and to list runs than the peer viewer's whole app (bench/peer.ts).
 */
export default function MarkdownText({ text }: { text: string }) {
  return (
    <Markdown disallowedElements={NO_IMAGES} unwrapDisallowed>
      {text}
    </Markdown>
  );
}
