#!/usr/bin/env node
/**
 * Makes the fixtures of the agent versions ProofLoop pins (package.json devDependencies): sessions
 * and OTLP telemetry written by Claude Code and Codex themselves, run headless here against a
 * scripted model endpoint on 127.0.0.1 (servers.mjs), each with a private home.
 *
 *   npm run fixtures:agents          # rewrites test/fixtures/{claude-code,codex,otlp}/… (see README)
 *
 * Each CLI runs one scripted session per OTLP encoding (protobuf, then JSON): a config allow, a
 * PreToolUse hook denial of `rm -rf build` (Claude Code) or an exec-policy rule's (Codex), a tool
 * error, a credential planted in a tool's output, thinking, a background subagent (Claude Code's
 * Agent call with run_in_background) or a goal (Codex's create_goal). What each wrote is copied as
 * is, and `test/fixtures/otlp/agents/manifest.json` says which telemetry belongs to which session.
 *
 * Nothing leaves the machine: the model endpoint and the OTLP capture are loopback servers, the
 * CLIs' other traffic is switched off or fails offline (Codex's plugin sync warns and goes on).
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModel, startOtlpCapture } from './servers.mjs';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const devVersion = (name) =>
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).devDependencies[name];
const FIXTURES = join(REPO, 'test', 'fixtures');
const BIN = join(REPO, 'node_modules', '.bin');
// A fixed place, so the paths the CLIs write (cwd, project folder names) are the same every time.
const ROOT = join(tmpdir(), 'proofloop-agent-fixtures');
// Beside the public fixtures (claude-code/projects, codex/sessions), one folder per pinned version.
const CC_DIR = `claude-code/cli-${devVersion('@anthropic-ai/claude-code')}`;
const CX_DIR = `codex/cli-${devVersion('@openai/codex')}`;
const verbose = process.argv.includes('--verbose');
const log = (s) => verbose && console.error(s);

/** A made-up token in the shape of a GitHub one: the redactor must catch it in every place it lands. */
export const PLANTED = `ghp_${'Fx7quB2mWcK9tR4sLp0aZyVd3NhE6gJ1oQ8i'}`;

function workspace(dir) {
  mkdirSync(join(dir, 'build'), { recursive: true });
  writeFileSync(join(dir, 'build', 'out.txt'), 'built\n');
  writeFileSync(join(dir, 'deploy.env'), `GITHUB_TOKEN=${PLANTED}\n`);
}

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), 180_000);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code ?? signal}\n${err.slice(-4000)}`));
    });
  });
}

/** Every file under dir, relative paths. */
function files(dir) {
  const out = [];
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop();
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) stack.push(p);
      else out.push(relative(dir, p));
    }
  }
  return out.sort();
}

/**
 * The OTLP bodies a run sent, as they came: `<nn>-<signal>.<pb|json>`; a body over 32 KB (Codex's
 * traces and metrics: hundreds of spans of its own internals) is stored gzipped, `….gz`, as a
 * sender may post it (the receiver takes `Content-Encoding: gzip`).
 */
function saveOtlp(bodies, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const names = [];
  bodies.forEach((b, i) => {
    const signal = b.path.split('/').pop();
    const zip = b.body.length > 32 * 1024;
    const name = `${String(i + 1).padStart(2, '0')}-${signal}.${b.type.includes('json') ? 'json' : 'pb'}${zip ? '.gz' : ''}`;
    writeFileSync(join(dir, name), zip ? gzipSync(b.body, { level: 9 }) : b.body);
    names.push(name);
  });
  return names;
}

// ---------------------------------------------------------------- Claude Code

const CC_SUB = 'FIXTURE-CC-SUB';
const CC_MAIN = 'FIXTURE-CC-MAIN';
const bash = (id, command, description) => ({ id, name: 'Bash', input: { command, description } });

const CLAUDE_SCRIPTS = {
  anthropic: [
    // The subagent's own requests start with its prompt.
    {
      marker: CC_SUB,
      turns: [
        { tools: [bash('toolu_fx_sub_ls', 'ls', 'List the files')] },
        { text: 'There are two entries.' },
      ],
    },
    {
      marker: CC_MAIN,
      turns: [
        {
          thinking: 'I should look around before changing anything.',
          text: 'Saying hello first.',
          tools: [bash('toolu_fx_echo', 'echo hello', 'Say hello')],
        },
        { tools: [bash('toolu_fx_rm', 'rm -rf build', 'Remove the build folder')] },
        { tools: [bash('toolu_fx_missing', 'cat missing.txt', 'Read a file that is not there')] },
        { tools: [bash('toolu_fx_env', 'cat deploy.env', 'Read the deploy settings')] },
        {
          tools: [
            {
              id: 'toolu_fx_agent',
              name: 'Agent',
              input: {
                description: 'Count files',
                prompt: `${CC_SUB}: count the files here`,
                subagent_type: 'general-purpose',
                run_in_background: true,
              },
            },
          ],
        },
        { text: 'The helper runs in the background; I will wait for it.' },
        { text: 'All done.' },
      ],
    },
  ],
  responses: [],
};

/** A PreToolUse hook that denies `rm -rf`, as a user's policy hook would. */
const HOOK = `let s = '';
process.stdin.on('data', (d) => (s += d)).on('end', () => {
  const c = JSON.parse(s).tool_input?.command ?? '';
  if (/rm -rf/.test(c))
    process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse',
      permissionDecision: 'deny', permissionDecisionReason: 'the fixture policy forbids rm -rf' } }));
});
`;

async function claude(encoding) {
  const root = join(ROOT, `claude-${encoding}`);
  const home = join(root, 'home');
  const config = join(home, '.claude');
  const work = join(root, 'work');
  mkdirSync(config, { recursive: true });
  workspace(work);
  writeFileSync(join(root, 'hook.mjs'), HOOK);
  writeFileSync(
    join(config, 'settings.json'),
    JSON.stringify(
      {
        permissions: { allow: ['Bash(echo:*)', 'Bash(cat:*)', 'Bash(ls:*)'] },
        hooks: {
          PreToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'command', command: `node ${join(root, 'hook.mjs')}` }] },
          ],
        },
      },
      null,
      2,
    ),
  );
  const model = await startModel(CLAUDE_SCRIPTS, (l) => log(`[claude model] ${l}`));
  const otlp = await startOtlpCapture((l) => log(`[claude otlp] ${l}`));
  try {
    await run(
      join(BIN, 'claude'),
      [
        '-p',
        `${CC_MAIN}: tidy this folder`,
        '--output-format',
        'stream-json',
        '--verbose',
        '--model',
        'claude-sonnet-4-5',
      ],
      {
        cwd: work,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          CLAUDE_CONFIG_DIR: config,
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: 'fixture-key',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_ENABLE_TELEMETRY: '1',
          CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
          OTEL_LOGS_EXPORTER: 'otlp',
          OTEL_METRICS_EXPORTER: 'otlp',
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_EXPORTER_OTLP_PROTOCOL: encoding === 'proto' ? 'http/protobuf' : 'http/json',
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_LOGS_EXPORT_INTERVAL: '300',
          OTEL_METRIC_EXPORT_INTERVAL: '500',
          OTEL_TRACES_EXPORT_INTERVAL: '300',
        },
      },
    );
    await new Promise((r) => setTimeout(r, 1000)); // the last export, sent at exit, may still be arriving
  } finally {
    await model.close();
    await otlp.close();
  }
  const projects = join(config, 'projects');
  const sessionFiles = files(projects);
  cpSync(projects, join(FIXTURES, CC_DIR, 'projects'), { recursive: true });
  const otlpDir = join(FIXTURES, 'otlp', 'agents', `claude-code-${encoding}`);
  const otlpFiles = saveOtlp(otlp.bodies, otlpDir);
  const session = sessionFiles.find((f) => !f.includes('/subagents/') && f.endsWith('.jsonl'));
  return {
    session: `${CC_DIR}/projects/${session}`,
    subagents: sessionFiles.filter((f) => f.includes('/subagents/')).map((f) => `${CC_DIR}/projects/${f}`),
    otlp: otlpFiles.map((f) => `otlp/agents/claude-code-${encoding}/${f}`),
  };
}

// ---------------------------------------------------------------- Codex

const CX_MAIN = 'FIXTURE-CX-MAIN';
const exec = (call_id, cmd) => ({ call_id, name: 'exec_command', args: { cmd } });

const CODEX_SCRIPTS = {
  anthropic: [],
  responses: [
    {
      marker: CX_MAIN,
      turns: [
        {
          thinking: 'Set the goal, then look around.',
          tools: [{ call_id: 'call_fx_goal', name: 'create_goal', args: { objective: 'Tidy this folder' } }],
        },
        { tools: [exec('call_fx_echo', 'echo hello')] },
        { tools: [exec('call_fx_rm', 'rm -rf build')] },
        { tools: [exec('call_fx_missing', 'cat missing.txt')] },
        { tools: [exec('call_fx_env', 'cat deploy.env')] },
        { text: 'All done.' },
      ],
    },
  ],
};

async function codex(encoding) {
  const root = join(ROOT, `codex-${encoding}`);
  const home = join(root, 'home');
  const codexHome = join(home, '.codex');
  const work = join(root, 'work');
  mkdirSync(join(codexHome, 'rules'), { recursive: true });
  workspace(work);
  // An exec-policy rule refuses `rm -rf` before it runs (Codex's config-side denial).
  writeFileSync(
    join(codexHome, 'rules', 'default.rules'),
    'prefix_rule(pattern = ["rm", "-rf"], decision = "forbidden")\n',
  );
  const model = await startModel(CODEX_SCRIPTS, (l) => log(`[codex model] ${l}`));
  const otlp = await startOtlpCapture((l) => log(`[codex otlp] ${l}`));
  const protocol = encoding === 'proto' ? 'binary' : 'json';
  const exporter = (signal) =>
    `{ otlp-http = { endpoint = "${otlp.url}/v1/${signal}", protocol = "${protocol}" } }`;
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'model = "gpt-5.1-codex"',
      'model_provider = "fixture"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      '[model_providers.fixture]',
      'name = "fixture"',
      `base_url = "${model.url}/v1"`,
      'wire_api = "responses"',
      'env_key = "FIXTURE_API_KEY"',
      '[otel]',
      'environment = "fixture"',
      'log_user_prompt = false',
      `exporter = ${exporter('logs')}`,
      `trace_exporter = ${exporter('traces')}`,
      `metrics_exporter = ${exporter('metrics')}`,
      '',
    ].join('\n'),
  );
  try {
    await run(
      join(BIN, 'codex'),
      ['exec', '--json', '--skip-git-repo-check', `${CX_MAIN}: tidy this folder`],
      {
        cwd: work,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          CODEX_HOME: codexHome,
          FIXTURE_API_KEY: 'fixture-key',
          RUST_LOG: 'error',
        },
      },
    );
    await new Promise((r) => setTimeout(r, 1000));
  } finally {
    await model.close();
    await otlp.close();
  }
  const sessions = join(codexHome, 'sessions');
  const rollouts = files(sessions);
  cpSync(sessions, join(FIXTURES, CX_DIR, 'sessions'), { recursive: true });
  const otlpFiles = saveOtlp(otlp.bodies, join(FIXTURES, 'otlp', 'agents', `codex-${encoding}`));
  return {
    session: `${CX_DIR}/sessions/${rollouts[0]}`,
    otlp: otlpFiles.map((f) => `otlp/agents/codex-${encoding}/${f}`),
  };
}

// ---------------------------------------------------------------- main

async function main() {
  for (const bin of ['claude', 'codex'])
    if (!existsSync(join(BIN, bin))) throw new Error(`${join(BIN, bin)} is missing: run npm install`);
  const versions = {
    claude: (await run(join(BIN, 'claude'), ['--version'], {})).trim(),
    codex: (await run(join(BIN, 'codex'), ['--version'], {})).trim(),
  };
  rmSync(ROOT, { recursive: true, force: true });
  // What an earlier run of this script made is replaced, not added to.
  for (const d of [CC_DIR, CX_DIR, 'otlp/agents'])
    rmSync(join(FIXTURES, d), { recursive: true, force: true });
  mkdirSync(join(FIXTURES, 'otlp', 'agents'), { recursive: true });
  const manifestPath = join(FIXTURES, 'otlp', 'agents', 'manifest.json');
  const sessions = {};
  for (const encoding of ['proto', 'json']) {
    sessions[`claude-code-${encoding}`] = await claude(encoding);
    console.log(`claude-code ${encoding}: ${sessions[`claude-code-${encoding}`].session}`);
    sessions[`codex-${encoding}`] = await codex(encoding);
    console.log(`codex ${encoding}: ${sessions[`codex-${encoding}`].session}`);
  }
  writeFileSync(
    manifestPath,
    `${JSON.stringify({ made_by: 'scripts/agent-fixtures/make.mjs', versions, planted: PLANTED, sessions }, null, 2)}\n`,
  );
  rmSync(ROOT, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
