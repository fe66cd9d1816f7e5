import { isObj, nonEmpty as str, type Obj } from '../json-read.js';
/** Codex's apply_patch text (`*** Begin Patch` … `*** End Patch`), read on both sides. */

const FILE_RE = /^\*\*\* (Add|Update|Delete) File: (.+)$/gm;

export interface PatchFile {
  op: 'add' | 'update' | 'delete';
  path: string;
  /** This file's section of the patch, from its `*** … File:` line to the next one. */
  patch: string;
}

/** The files a patch names, in order, each with its section of the patch. */
export function patchSections(patch: string): PatchFile[] {
  const heads = [...patch.matchAll(FILE_RE)];
  return heads.map((m, i) => {
    const end = i + 1 < heads.length ? heads[i + 1]!.index : patch.search(/^\*\*\* End Patch/m);
    const stop = end === undefined || end < 0 ? patch.length : end;
    return {
      op: m[1]!.toLowerCase() as PatchFile['op'],
      path: m[2]!.trim(),
      patch: patch.slice(m.index, stop).replace(/\n$/, ''),
    };
  });
}

export function patchFiles(patch: string): string[] {
  return patchSections(patch).map((f) => f.path);
}

/** An apply_patch call's patch: custom_tool_call `input`, or function_call arguments {input|patch}. */
export function patchOf(item: Obj): string | null {
  if (item.name !== 'apply_patch') return null;
  const input = str(item.input);
  if (input !== null) return input;
  const args = str(item.arguments);
  if (args === null) return null;
  try {
    const a: unknown = JSON.parse(args);
    if (isObj(a)) return str(a.input) ?? str(a.patch);
  } catch {
    // arguments that are not JSON are not a patch; the call is still an event
  }
  return null;
}
