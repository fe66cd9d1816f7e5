/**
 * The parts of a payload a person reads rather than parses: a tool call's command or patch, texts
 * with their line breaks, Markdown where the source writes Markdown, JSON kept in a string. Found
 * by a bounded walk (an explicit stack, a depth and a count limit: the input decides neither).
 */
export type BlockKind = 'command' | 'patch' | 'text' | 'markdown' | 'json';

export interface Block {
  /** Where in the payload: `content`, `args.command`, `message.content[0].text`. */
  path: string;
  kind: BlockKind;
  text: string;
}

/** Kinds whose texts are written by a model or a person, in Markdown. */
const MARKDOWN_KINDS = new Set([
  'model_responded',
  'model_reasoned',
  'user_prompted',
  'cc_assistant',
  'cc_user',
  'codex_response_item',
  'codex_event_agent_message',
]);
const COMMAND_KEYS = new Set(['command', 'cmd', 'script']);
const PATCH_KEYS = new Set(['patch', 'diff', 'unified_diff']);
const MAX_DEPTH = 8;
const MAX_BLOCKS = 12;
/** A string shorter than this on one line reads well in the tree already. */
const LONG = 100;

const MD_MARKS = /(^|\n)(#{1,6} |[-*+] |\d+\. |```|> )|\*\*[^*\n]+\*\*|`[^`\n]+`|\[[^\]\n]+\]\([^)\s]+\)/;

/** A string that holds a JSON object or array (OTLP attributes, tool results), parsed; else undefined. */
export function jsonInString(s: string): unknown {
  const t = s.trim();
  if (!((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']')))) return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}

function looksLikePatch(s: string): boolean {
  return /^(--- |diff --git |\*\*\* Begin Patch|@@ )/m.test(s) && /^[+-]/m.test(s);
}

const keyPath = (base: string, k: string | number) =>
  typeof k === 'number' ? `${base}[${k}]` : base ? `${base}.${k}` : k;

/** The readable blocks of an event's payload (as protocol v1 reads it), in payload order. */
export function readableBlocks(kind: string, payload: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  const markdown = MARKDOWN_KINDS.has(kind);
  const stack: { v: unknown; path: string; key: string; depth: number }[] = [
    { v: payload, path: '', key: '', depth: 0 },
  ];
  while (stack.length > 0 && out.length < MAX_BLOCKS) {
    const { v, path, key, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const k = key.toLowerCase();
      if (COMMAND_KEYS.has(k) && path.includes('args') && v.trim() !== '') {
        out.push({ path, kind: 'command', text: v });
      } else if ((PATCH_KEYS.has(k) || looksLikePatch(v)) && v.includes('\n')) {
        out.push({ path, kind: 'patch', text: v });
      } else if (jsonInString(v) !== undefined && v.length > 2) {
        out.push({ path, kind: 'json', text: v });
      } else if (v.includes('\n') || v.length > LONG) {
        out.push({ path, kind: markdown && MD_MARKS.test(v) ? 'markdown' : 'text', text: v });
      }
      continue;
    }
    if (depth >= MAX_DEPTH || v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      // A command given as argv reads as one line.
      if (COMMAND_KEYS.has(key.toLowerCase()) && v.every((x) => typeof x === 'string')) {
        out.push({ path, kind: 'command', text: (v as string[]).join(' ') });
        continue;
      }
      for (let i = Math.min(v.length, 200) - 1; i >= 0; i--)
        stack.push({ v: v[i], path: keyPath(path, i), key: String(i), depth: depth + 1 });
      continue;
    }
    const entries = Object.entries(v as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, x] = entries[i]!;
      stack.push({ v: x, path: keyPath(path, k), key: k, depth: depth + 1 });
    }
  }
  return out;
}
