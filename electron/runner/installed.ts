/**
 * Which agents can run on this machine, for the app's task panel (`agents.list`): the simulated
 * agent always; a real CLI when its binary answers `--version` (agents/<name>.ts `version()`).
 */
import { AGENT_NAMES, realAgent } from './agents/registry';

export interface AgentInfo {
  name: string;
  title: string;
  installed: boolean;
  version: string | null;
  detail: string;
  upstream: { key_env: string[]; key_set: boolean } | null;
}

const TITLES: Record<string, string> = {
  sim: 'ProofLoop’s simulated agent',
  'claude-code': 'Claude Code',
  codex: 'Codex',
};

/** What runs, for an installed CLI: how it is started and how the host decides its calls. */
const HOW: Record<string, string> = {
  'claude-code':
    'headless (claude -p) in a private home; every tool call passes its hook to the task’s policy',
  codex: 'headless (codex exec) in a private home; every tool call passes its hooks to the task’s policy',
};

/**
 * A CLI that could not be run is asked again after this long: it may be installed meanwhile, and
 * a failed probe is cheap to repeat but not on every panel opening (a hanging binary blocks up to
 * its 20 s --version timeout).
 */
const RETRY_MS = 60_000;
const failed = new Map<string, { at: number; why: string }>();

/** The first line of a failed --version, without the command's noise (bounded for the panel). */
function why(e: unknown): string {
  const err = e as { code?: string; message?: string; stderr?: string };
  if (err.code === 'MODULE_NOT_FOUND') return 'not installed (its npm package is missing)';
  if (err.code === 'ENOENT') return 'not installed (its binary is missing)';
  const line = (err.stderr || err.message || String(e)).split('\n').find((l) => l.trim()) ?? 'failed';
  return `cannot run: ${line.trim().slice(0, 200)}`;
}

export function installedAgents(env: NodeJS.ProcessEnv = process.env, now = Date.now()): AgentInfo[] {
  return AGENT_NAMES.map((name): AgentInfo => {
    const title = TITLES[name] ?? name;
    if (name === 'sim')
      return {
        name,
        title,
        installed: true,
        version: null,
        detail: 'built in: the host’s own loop; the variant is the model',
        upstream: null,
      };
    let agent;
    try {
      agent = realAgent(name);
    } catch (e) {
      return { name, title, installed: false, version: null, detail: why(e), upstream: null };
    }
    const keyEnv = agent.dialect.upstream.keyEnv;
    const upstream = { key_env: [...keyEnv], key_set: keyEnv.some((k) => Boolean(env[k])) };
    const last = failed.get(name);
    if (last && now - last.at < RETRY_MS)
      return { name, title, installed: false, version: null, detail: last.why, upstream };
    try {
      // version() is memoised by the agent: the CLI is run once per process.
      const version = agent.version();
      failed.delete(name);
      return { name, title, installed: true, version, detail: HOW[name] ?? `${name} ${version}`, upstream };
    } catch (e) {
      const w = why(e);
      failed.set(name, { at: now, why: w });
      return { name, title, installed: false, version: null, detail: w, upstream };
    }
  });
}
