/**
 * ATIF, Harbor's Agent Trajectory Interchange Format (`trajectory.json`, `*.trajectory.json`):
 * one JSON document `{schema_version: "ATIF-v1.x", session_id, agent, steps[], notes?,
 * final_metrics?, continued_trajectory_ref?, extra?, subagent_trajectories?}`.
 *
 * Naming (each event's payload is its part of the document as written):
 *   the document less steps and subagent_trajectories → run_started (run: its session_id)
 *   a step (part 0)            → user_prompted (source "user"), atif_system_step ("system"),
 *                                model_responded ("agent": message, reasoning, metrics),
 *                                atif_<source>_step (another source)
 *   an agent step's tool calls → model_proposed, one each (parts 1…n)
 *   a step's observation       → tool_returned per result with a source_call_id (or the one result
 *                                of a step of one tool call, which terminus-2 writes without it),
 *                                atif_observation per other result (parts n+1…); a result's
 *                                subagent_trajectory_ref names the subagent's session and file
 *   subagent_trajectories[i]   → the same, as a run of its own (its session_id), found without
 *                                recursion (a bounded stack)
 * How the parts read as v1 is shared/formats/atif.ts.
 */
import { kindPart } from './names';
import type { DocPart, DocumentAdapter, MappedEvent } from './types';
import { dict } from '../../../shared/dict.js';
import { isObj, nonEmpty as str, type Obj } from '../../../shared/json-read.js';

/** Subagent trajectories nested deeper than this are a finding, not read. */
export const MAX_SUBAGENT_DEPTH = 16;

const isAtif = (x: unknown): x is Obj =>
  isObj(x) &&
  typeof x.schema_version === 'string' &&
  /^ATIF-v\d/.test(x.schema_version) &&
  Array.isArray(x.steps);

export const atif: DocumentAdapter = {
  name: 'atif',
  label: 'ATIF trajectory',
  sniff: (head) =>
    /"schema_version"\s*:\s*"ATIF-v/.test(head) || (/^\s*\{/.test(head) && /"steps"\s*:/.test(head)),
  claims: isAtif,
  runId: (doc) => (isObj(doc) ? str(doc.session_id) : null),
  parts(doc) {
    const out: DocPart[] = [];
    const stack: { t: unknown; pointer: string; run: string | undefined; depth: number }[] = [
      { t: doc, pointer: '', run: undefined, depth: 0 },
    ];
    let sub = 0;
    while (stack.length > 0) {
      const { t, pointer, run, depth } = stack.shift()!;
      if (!isObj(t)) {
        out.push({ record: { value: t ?? null }, type: 'not_atif', pointer, run });
        continue;
      }
      const head: Obj = dict();
      for (const [k, v] of Object.entries(t)) if (k !== 'steps' && k !== 'subagent_trajectories') head[k] = v;
      out.push({ record: head, type: 'root', pointer, run });
      const steps = Array.isArray(t.steps) ? t.steps : [];
      steps.forEach((s, i) =>
        out.push({
          record: isObj(s) ? s : { value: s ?? null },
          type: 'step',
          pointer: `${pointer}/steps/${i}`,
          run,
        }),
      );
      const subs = Array.isArray(t.subagent_trajectories) ? t.subagent_trajectories : [];
      subs.forEach((s, i) => {
        const p = `${pointer}/subagent_trajectories/${i}`;
        if (depth + 1 > MAX_SUBAGENT_DEPTH) {
          out.push({ record: { nested_deeper_than: MAX_SUBAGENT_DEPTH }, type: 'too_deep', pointer: p, run });
          return;
        }
        const id = (isObj(s) ? str(s.session_id) : null) ?? `${run ?? 'trajectory'}:subagent-${++sub}`;
        stack.push({ t: s, pointer: p, run: id, depth: depth + 1 });
      });
    }
    return out;
  },
  mapPart(part) {
    const r = part.record;
    const at = str(r.timestamp) ?? '';
    const ids: Record<string, string> = dict();
    if (typeof r.step_id === 'number' || typeof r.step_id === 'string') ids.step_id = String(r.step_id);
    const ev = (kind: string, partNo?: number, more: Record<string, string> = {}): MappedEvent => ({
      kind,
      at,
      payload: r,
      source: { ...(partNo === undefined ? {} : { part: partNo }), ids: { ...ids, ...more } },
      ...(part.run ? { run: part.run } : {}),
    });
    switch (part.type) {
      case 'root': {
        const sid = str(r.session_id);
        return [
          {
            kind: 'run_started',
            at: '',
            payload: r,
            source: { ids: sid ? { session_id: sid } : {} },
            ...(part.run ? { run: part.run } : {}),
          },
        ];
      }
      case 'step': {
        const source = str(r.source) ?? 'unnamed';
        const first =
          source === 'user'
            ? 'user_prompted'
            : source === 'system'
              ? 'atif_system_step'
              : source === 'agent'
                ? 'model_responded'
                : `atif_${kindPart(source, 50)}_step`;
        const out: MappedEvent[] = [ev(first, 0)];
        // Only agent steps call tools; a system step's observation may hold subagent results (v1.2+).
        const calls = source === 'agent' && Array.isArray(r.tool_calls) ? r.tool_calls : [];
        calls.forEach((c, j) => {
          const id = isObj(c) ? str(c.tool_call_id) : null;
          out.push(ev('model_proposed', 1 + j, id ? { tool_call_id: id } : {}));
        });
        const obs = isObj(r.observation) && Array.isArray(r.observation.results) ? r.observation.results : [];
        obs.forEach((o, k) => {
          const id = isObj(o) ? str(o.source_call_id) : null;
          const more: Record<string, string> = id ? { source_call_id: id } : {};
          const refs = isObj(o) && Array.isArray(o.subagent_trajectory_ref) ? o.subagent_trajectory_ref : [];
          refs.filter(isObj).forEach((ref, j) => {
            const n = j === 0 ? '' : `_${j + 1}`;
            const s = str(ref.session_id);
            const p = str(ref.trajectory_path);
            if (s) more[`subagent_session_id${n}`] = s;
            if (p) more[`subagent_trajectory_path${n}`] = p;
          });
          // Harbor's terminus-2 writes the result of a step's one call without its source_call_id.
          const result = id !== null || (calls.length === 1 && obs.length === 1);
          out.push(ev(result ? 'tool_returned' : 'atif_observation', 1 + calls.length + k, more));
        });
        return out;
      }
      case 'too_deep':
        return { error: `a subagent trajectory nested deeper than ${MAX_SUBAGENT_DEPTH} levels: not read` };
      default:
        return { error: 'an ATIF subagent trajectory must be an object' };
    }
  },
};
