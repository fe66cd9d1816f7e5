/**
 * ProofLoop's hook client: the small program an agent's hook runs for each tool call. It is
 * written into the agent's private home as plain JavaScript (no build, no dependency) and run by
 * Node: stdin (the agent's hook JSON) → POST to the run's gateway → stdout (the host's answer).
 * Whatever goes wrong (no host, a timeout, a bad answer), it exits 2 with the reason on stderr:
 * for a PreToolUse hook that blocks the call. It never fails open.
 */
export const HOOK_CLIENT_FILE = 'proofloop-hook.mjs';

export const HOOK_CLIENT_SOURCE = `// ProofLoop hook client (see electron/runner/agents/hook-client.ts). Fails closed: exit 2.
const fail = (why) => { process.stderr.write('proofloop hook: ' + why + '\\n'); process.exit(2); };
try {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const input = Buffer.concat(chunks).toString('utf8');
  const url = process.env.PROOFLOOP_HOOK_URL, token = process.env.PROOFLOOP_HOOK_TOKEN;
  if (!url || !token) fail('PROOFLOOP_HOOK_URL / PROOFLOOP_HOOK_TOKEN are not set');
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-proofloop-token': token },
    body: input,
    signal: AbortSignal.timeout(30000),
  });
  const text = await res.text();
  if (!res.ok) fail('host answered ' + res.status + ': ' + text.slice(0, 500));
  const out = JSON.parse(text);
  if (out && out.block) fail(String(out.block));
  process.stdout.write(JSON.stringify(out) + '\\n');
} catch (e) {
  fail(e && e.message ? e.message : String(e));
}
`;
