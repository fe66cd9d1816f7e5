/**
 * A large Inspect AI log (issue 27): a generated `.eval` whose one sample holds 100,000 events
 * (spans, condensed model events with `input_refs` into a message pool, tool events, state
 * changes, a score), deflated as Inspect writes them. `proofloop serve` on a fresh folder holding
 * it, in Debian's Chromium: from clicking the sample in the list to its first timeline rows (goal
 * ≤ 1 s, as bench/ui.ts times a run's first rows; the importer commits the first records of the
 * sample while it reads the rest), and from starting serve to those rows, and keyboard steps in the middle of the sample once it is
 * imported (goal p95 ≤ 50 ms); and `proofloop open` of the same file as a whole process (rate,
 * peak RSS: the sample is one zip entry, read into memory once). Runnable alone after
 * `npm run build`: `npx tsx bench/inspect.ts`; PL_BENCH_INSPECT_EVENTS=<n> for a quicker look.
 */
import { chromium } from '@playwright/test';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import yazl from 'yazl';
import { figures, runMeasured, spawnMeasured } from './child';
import { cliArgs, cliRoot } from './cli';
import { IN_PAGE_STEP_TIMER, jumpTo, quantile, timeSteps, untilImported } from './ui';
import { CHROMIUM_LAUNCH } from '../test/e2e/helpers/chromium';
import { isMain } from './is-main';

export const GOALS = { first_rows_ms: 1000, step_p95_ms: 50 };

const EVAL_ID = 'benchEvalLarge0000000001';
const SAMPLE_RUN = `${EVAL_ID}:1_epoch_1`;

/** The events of one long agent sample, cycling through what an Inspect agent loop writes. */
function sampleJson(n: number): { text: string; events: number } {
  const t0 = Date.parse('2026-11-01T10:00:00Z');
  const ts = (i: number) => new Date(t0 + i * 10).toISOString().replace('Z', '+00:00');
  const events: string[] = [];
  const messages: string[] = [];
  const push = (o: object) => events.push(JSON.stringify(o));
  const span = 'sp-solver';
  push({ event: 'span_begin', id: span, name: 'solver', type: 'solver', timestamp: ts(0), span_id: span });
  let turn = 0;
  // Each turn: span_begin, model (one tool call), span_begin tool, tool, state, span_end, span_end: 7.
  while (events.length + 7 + 3 <= n) {
    const i = events.length;
    const call = `call_${turn}`;
    const turnSpan = `sp-turn-${turn}`;
    messages.push(JSON.stringify({ id: `m${turn}`, role: 'user', content: `step ${turn}: go on` }));
    push({
      event: 'span_begin',
      id: turnSpan,
      parent_id: span,
      name: `turn ${turn}`,
      timestamp: ts(i),
      span_id: turnSpan,
    });
    push({
      event: 'model',
      uuid: `ev-model-${turn}`,
      span_id: turnSpan,
      timestamp: ts(i + 1),
      model: 'openai/gpt-4o-mini',
      input: [],
      input_refs: [[Math.max(0, turn - 20), turn + 1]],
      tools: [{ name: 'bash', description: 'Run a command.' }],
      config: {},
      output: {
        model: 'gpt-4o-mini',
        choices: [
          {
            message: {
              role: 'assistant',
              content: `Turn ${turn}: listing the files of step ${turn % 97}.`,
              tool_calls: [
                { id: call, function: 'bash', arguments: { cmd: `ls step-${turn % 97}` }, type: 'function' },
              ],
            },
            stop_reason: 'tool_calls',
          },
        ],
        usage: { input_tokens: 900 + (turn % 50), output_tokens: 40, total_tokens: 940 + (turn % 50) },
      },
      completed: ts(i + 2),
      working_time: 0.8,
    });
    push({
      event: 'span_begin',
      id: `sp-tool-${turn}`,
      parent_id: turnSpan,
      name: 'bash',
      type: 'tool',
      timestamp: ts(i + 2),
      span_id: `sp-tool-${turn}`,
    });
    push({
      event: 'tool',
      type: 'function',
      id: call,
      function: 'bash',
      arguments: { cmd: `ls step-${turn % 97}` },
      result: `a.txt\nb.txt\nstep-${turn % 97}.log\n`,
      span_id: `sp-tool-${turn}`,
      timestamp: ts(i + 3),
      completed: ts(i + 4),
      working_time: 0.02,
    });
    push({
      event: 'state',
      span_id: turnSpan,
      timestamp: ts(i + 5),
      changes: [{ op: 'replace', path: '/messages/-', value: `turn ${turn}` }],
    });
    push({ event: 'span_end', id: `sp-tool-${turn}`, timestamp: ts(i + 5), span_id: `sp-tool-${turn}` });
    push({ event: 'span_end', id: turnSpan, timestamp: ts(i + 6), span_id: turnSpan });
    turn += 1;
  }
  while (events.length < n - 2)
    push({
      event: 'info',
      source: 'bench',
      data: `padding ${events.length}`,
      timestamp: ts(events.length),
      span_id: span,
    });
  push({
    event: 'score',
    score: { value: 'C', answer: 'done', explanation: 'the files were listed' },
    target: 'done',
    timestamp: ts(events.length),
    span_id: span,
  });
  push({ event: 'span_end', id: span, timestamp: ts(events.length), span_id: span });
  const shell = JSON.stringify({
    id: 1,
    epoch: 1,
    input: 'List the files of every step.',
    target: 'done',
    scores: { match: { value: 'C' } },
    model_usage: { 'openai/gpt-4o-mini': { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
    uuid: 'benchSample1',
  }).slice(0, -1);
  const text = `${shell},"events":[${events.join(',')}],"events_data":{"messages":[${messages.join(',')}],"calls":[]},"messages":[],"attachments":{}}`;
  return { text, events: events.length };
}

/** The `.eval` zip: journal start, the sample, summaries, reductions, header; deflate, as Inspect writes. */
export async function writeEval(file: string, n: number): Promise<{ events: number; sample_mb: number }> {
  const zip = new yazl.ZipFile();
  const spec = {
    eval_id: EVAL_ID,
    run_id: 'benchRun',
    created: '2026-11-01T10:00:00+00:00',
    task: 'bench_long_agent',
    task_id: 'benchTask',
    model: 'openai/gpt-4o-mini',
    dataset: { samples: 1 },
  };
  const plan = { name: 'plan', steps: [{ solver: 'react', params: {} }] };
  const add = (name: string, text: string) => zip.addBuffer(Buffer.from(text), name, { compress: true });
  add('_journal/start.json', JSON.stringify({ version: 2, eval: spec, plan }));
  const s = sampleJson(n);
  add('samples/1_epoch_1.json', s.text);
  add('summaries.json', JSON.stringify([{ id: 1, epoch: 1, scores: { match: { value: 'C' } } }]));
  add('reductions.json', JSON.stringify([]));
  const header = {
    version: 2,
    status: 'success',
    eval: spec,
    plan,
    results: {
      scores: [{ name: 'match', scorer: 'match', metrics: { accuracy: { name: 'accuracy', value: 1 } } }],
    },
    stats: { started_at: '2026-11-01T10:00:00+00:00', completed_at: '2026-11-01T10:20:00+00:00' },
  };
  add('header.json', JSON.stringify(header));
  zip.end();
  const out = createWriteStream(file);
  zip.outputStream.pipe(out);
  await finished(out);
  return { events: s.events, sample_mb: Number((Buffer.byteLength(s.text) / 2 ** 20).toFixed(1)) };
}

async function inspector(folder: string, home: string) {
  if (!existsSync(CHROMIUM_LAUNCH.executablePath))
    return { skipped: `${CHROMIUM_LAUNCH.executablePath} is missing (apt-get install -y chromium)` };
  const browser = await chromium.launch(CHROMIUM_LAUNCH);
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const serve = spawnMeasured(process.execPath, cliArgs(['--json', 'serve', folder], 'inspect-serve'), {
      cwd: cliRoot(),
      env: { ...process.env, PROOFLOOP_HOME: home },
    });
    const t0 = performance.now();
    try {
      const printed = await serve.waitForLine((l) => /"url":/.test(l));
      const url = JSON.parse(`{${printed.line.trim().replace(/,$/, '')}}`).url as string;
      await page.goto(url, { timeout: 300_000 });
      const pageLoaded = performance.now() - t0;
      const item = page.locator(`[data-testid="run-item"][data-run-id="${SAMPLE_RUN}"]`);
      await item.waitFor({ timeout: 300_000 });
      const listed = performance.now() - t0;
      const tClick = performance.now();
      await item.click();
      const rows = page.getByTestId('timeline-row');
      await rows.first().waitFor({ timeout: 300_000 });
      const firstRows = performance.now() - t0;
      const clickToRows = performance.now() - tClick;
      // Steps once the opening import is done (as the sessions bench does).
      const events = await untilImported(url, SAMPLE_RUN, t0);
      const importDone = performance.now() - t0;
      const seq = Math.floor(events / 2);
      const jumpMs = await jumpTo(page, SAMPLE_RUN, seq);
      await page.getByTestId('timeline').focus();
      await page.evaluate(IN_PAGE_STEP_TIMER);
      const steps = await timeSteps(page, 'ArrowRight', 1, 60);
      const jumps = await timeSteps(page, 'PageDown', 25, 30);
      return {
        serve_printed_url_ms: Math.round(printed.ms),
        serve_to_page_loaded_ms: Math.round(pageLoaded),
        serve_to_sample_listed_ms: Math.round(listed),
        serve_to_first_rows_ms: Math.round(firstRows),
        click_to_first_rows_ms: Math.round(clickToRows),
        serve_to_import_done_ms: Math.round(importDone),
        events,
        jump_to_middle_ms: Math.round(jumpMs),
        step_ms: { p50: quantile(steps, 0.5), p95: quantile(steps, 0.95), max: quantile(steps, 1) },
        page_down_step_ms: { p50: quantile(jumps, 0.5), p95: quantile(jumps, 0.95), max: quantile(jumps, 1) },
      };
    } finally {
      await page.close();
      await serve.stop();
    }
  } finally {
    await browser.close();
  }
}

export async function benchInspect(n = Number(process.env.PL_BENCH_INSPECT_EVENTS ?? 100_000)) {
  const root = mkdtempSync(path.join(tmpdir(), 'pl-bench-inspect-'));
  try {
    const folder = path.join(root, 'logs');
    mkdirSync(folder);
    const file = path.join(folder, '2026-11-01T10-00-00+00-00_bench-long-agent.eval');
    const t = performance.now();
    const gen = await writeEval(file, n);
    const genMs = performance.now() - t;
    const fileMb = statSync(file).size / 2 ** 20;

    const home = path.join(root, 'home-open');
    const opened = await runMeasured(process.execPath, cliArgs(['--json', 'open', folder], 'inspect-open'), {
      cwd: cliRoot(),
      env: { ...process.env, PROOFLOOP_HOME: home },
    });
    const info = JSON.parse(opened.stdout) as { imported: { events: number; findings: number } };
    rmSync(path.join(folder, '.proofloop'), { recursive: true, force: true });

    const ui = await inspector(folder, path.join(root, 'home-serve')).catch((e: Error) => ({
      error: e.message,
    }));
    return {
      goals: GOALS,
      sample_events: gen.events,
      sample_json_mb: gen.sample_mb,
      file_mb: Number(fileMb.toFixed(1)),
      generate_ms: Math.round(genMs),
      open: {
        ...figures(opened),
        import_ms: opened.first_stdout_ms,
        events: info.imported.events,
        findings: info.imported.findings,
        events_per_s: opened.first_stdout_ms
          ? Math.round(info.imported.events / (opened.first_stdout_ms / 1000))
          : null,
      },
      inspector: ui,
      load_average: Number(loadavg()[0]!.toFixed(1)),
      // "Opens with the first rows": from selecting the sample in the list (as bench/ui.ts times a
      // run's first rows); from starting serve, the process start and page load come first.
      goal_ok: {
        first_rows:
          'click_to_first_rows_ms' in ui ? ui.click_to_first_rows_ms! <= GOALS.first_rows_ms : false,
        step_p95: 'step_ms' in ui ? ui.step_ms!.p95 <= GOALS.step_p95_ms : false,
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (isMain('inspect')) console.log(JSON.stringify(await benchInspect(), null, 2));
