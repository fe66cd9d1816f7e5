/**
 * ProofLoop beside a peer viewer of Claude Code sessions (issue 29): `claude-run` 0.3.0 from npm,
 * installed into a temporary folder at bench time (never a project dependency), on the same
 * folders in the same run. For each folder and each viewer, a whole server process in Debian's
 * Chromium, as a new user meets it: start the server, open its page as soon as it is listening,
 * click the session, and time until the session's first assistant text is on screen ("first
 * messages", stamped by the page at the frame that paints it: bench/painted.ts); then peak RSS of
 * the server process (GNU time), which is stopped 2 s after.
 * - small: a `.claude` folder of 5 small sessions (~4 turns each) in 3 projects;
 * - big: one 200 MB session with multi-MB lines (as bench/sessions.ts writes them).
 * ProofLoop runs `serve <dir>/projects --no-otlp` on a fresh PROOFLOOP_HOME (its first open of the
 * folder: the ledger is built then); claude-run `--dir <dir> --no-open`, which lists sessions from
 * `<dir>/history.jsonl` (written here as Claude Code writes it) and reads a session's file when it
 * is opened. Goal (issue 29): no slower and no more memory than claude-run on the small folder.
 *
 * `npx tsx bench/peer.ts [small|big]` after `npm run build`; PL_BENCH_PEER_ROUNDS=<n> (default 6
 * on small, 1 on big) alternates which viewer goes first; PL_BENCH_PEER_BIG_MB=<mb> (200).
 */
import { chromium, type Browser } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { figures, spawnMeasured, type ChildFigures } from './child';
import { cliArgs, cliRoot } from './cli';
import { writeClaudeSession, uuidOf } from './gen-claude';
import { CHROMIUM_LAUNCH } from '../test/e2e/helpers/chromium';
import { mulberry32 } from '../shared/prng';
import { isMain } from './is-main';
import { median as med, ratioInterval } from './ratio';
import { loadedEpoch, pageClock, paintedEpoch, pressedEpoch, watchPainted } from './painted';

export const PEER = { name: 'claude-run', version: '0.3.0' };
/** Kept for the figures after first messages, the same for both viewers. */
const SETTLE_MS = 2000;

type Obj = Record<string, unknown>;

interface Folder {
  dir: string;
  /** The session clicked: its first prompt's opening words (both lists show them), its first text. */
  session: string;
  promptPrefix: string;
  textPrefix: string;
  sessions: number;
  mb: number;
}

/** The first words of a text, on its first line: what `getByText` finds whole in either page. */
const prefix = (t: string, n = 40): string => t.split('\n')[0]!.trim().slice(0, n).trim();

/** Writes Claude Code's `history.jsonl` for the sessions, newest last, as the CLI appends it. */
function writeHistory(
  dir: string,
  entries: { display: string; project: string; sessionId: string; ts: number }[],
) {
  for (const e of entries)
    appendFileSync(
      path.join(dir, 'history.jsonl'),
      JSON.stringify({
        display: e.display,
        pastedContents: {},
        timestamp: e.ts,
        project: e.project,
        sessionId: e.sessionId,
      }) + '\n',
    );
}

/** The first prompt and the first assistant text of a generated session, read from its file. */
function firstTexts(file: string): { prompt: string; text: string } {
  let prompt = '';
  let text = '';
  // Only the head of the file: a big session's first lines are small.
  const fd = readFileSync(file, { encoding: 'utf8', flag: 'r' }).slice(0, 1 << 20);
  for (const line of fd.split('\n')) {
    if (!line.trim()) continue;
    let rec: Obj;
    try {
      rec = JSON.parse(line) as Obj;
    } catch {
      continue;
    }
    const m = rec.message as Obj | undefined;
    if (!prompt && rec.type === 'user' && m) {
      const c = m.content;
      if (typeof c === 'string') prompt = c;
      else if (Array.isArray(c)) {
        const t = (c as Obj[]).find((b) => b.type === 'text');
        if (t) prompt = String(t.text);
      }
    }
    if (!text && rec.type === 'assistant' && m && Array.isArray(m.content)) {
      const t = (m.content as Obj[]).find((b) => b.type === 'text');
      if (t) text = String(t.text);
    }
    if (prompt && text) break;
  }
  return { prompt, text };
}

export function smallFolder(root: string): Folder {
  const dir = path.join(root, 'small', '.claude');
  const r = mulberry32(29);
  const entries = [];
  const seen = new Set<string>();
  let pick: Folder | null = null;
  for (let i = 0, seed = 1; entries.length < 5; seed++) {
    const sid = uuidOf(r);
    const cwd = `/home/dev/app-${i % 3}`;
    const file = path.join(dir, 'projects', `-home-dev-app-${i % 3}`, `${sid}.jsonl`);
    const w = writeClaudeSession(file, { sessionId: sid, cwd, turns: 4, seed: seed * 7 });
    const { prompt, text } = firstTexts(file);
    // Sessions whose prompts open alike would make the click ambiguous: write another instead.
    if (seen.has(prefix(prompt)) || !prefix(text)) {
      rmSync(file);
      continue;
    }
    seen.add(prefix(prompt));
    entries.push({
      display: prompt,
      project: cwd,
      sessionId: sid,
      ts: Date.parse('2026-02-10T09:00:00Z') + i * 60_000,
    });
    // The middle session: neither the first nor the last either list shows.
    if (i === 2)
      pick = {
        dir,
        session: sid,
        promptPrefix: prefix(prompt),
        textPrefix: prefix(text),
        sessions: 5,
        mb: w.bytes / 2 ** 20,
      };
    i++;
  }
  writeHistory(dir, entries);
  return { ...pick!, mb: Number(pick!.mb.toFixed(2)) };
}

function bigFolder(root: string, mbs: number): Folder {
  const dir = path.join(root, 'big', '.claude');
  const sid = uuidOf(mulberry32(200));
  const file = path.join(dir, 'projects', '-home-dev-big', `${sid}.jsonl`);
  const w = writeClaudeSession(file, {
    sessionId: sid,
    cwd: '/home/dev/big',
    bytes: mbs << 20,
    bigEvery: 60,
    seed: 5,
  });
  const { prompt, text } = firstTexts(file);
  writeHistory(dir, [
    { display: prompt, project: '/home/dev/big', sessionId: sid, ts: Date.parse('2026-02-10T09:00:00Z') },
  ]);
  return {
    dir,
    session: sid,
    promptPrefix: prefix(prompt),
    textPrefix: prefix(text),
    sessions: 1,
    mb: Math.round(w.bytes / 2 ** 20),
  };
}

/** `npm install --prefix <tmp> claude-run@0.3.0`; the path of its entry, or why not. */
function installPeer(root: string): { bin: string } | { error: string } {
  const prefixDir = path.join(root, 'peer');
  mkdirSync(prefixDir, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(
    npm,
    [
      'install',
      '--prefix',
      prefixDir,
      `${PEER.name}@${PEER.version}`,
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
    ],
    { encoding: 'utf8', timeout: 300_000 },
  );
  const bin = path.join(prefixDir, 'node_modules', PEER.name, 'dist', 'index.js');
  if (r.status !== 0 || !existsSync(bin))
    return {
      error: `npm install ${PEER.name}@${PEER.version} failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? '').trim().slice(-400)}`,
    };
  return { bin };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface ViewerFigures {
  url_ms: number;
  page_loaded_ms: number;
  session_listed_ms: number;
  /** When the page received the click's press: after it, the page's own time to first messages. */
  pressed_ms: number | null;
  first_messages_ms: number;
  process: ChildFigures;
}

/** One viewer on one folder: server start → URL → page → session listed → its first messages. */
async function timeViewer(
  browser: Browser,
  viewer: 'proofloop' | 'claude-run',
  folder: Folder,
  peerBin: string,
  home: string,
): Promise<ViewerFigures> {
  const port = await freePort();
  const run =
    viewer === 'proofloop'
      ? spawnMeasured(
          process.execPath,
          cliArgs(
            ['--json', 'serve', path.join(folder.dir, 'projects'), '--no-otlp', '--port', String(port)],
            `peer-${viewer}`,
          ),
          { cwd: cliRoot(), env: { ...process.env, PROOFLOOP_HOME: home } },
        )
      : spawnMeasured(process.execPath, [peerBin, '--dir', folder.dir, '--port', String(port), '--no-open'], {
          cwd: path.dirname(peerBin),
        });
  process.stderr.write(`peer: ${viewer} started\n`);
  // Listened for before anything is awaited: a line printed while the page opens is not missed.
  const urlLine = run.waitForLine((l) =>
    viewer === 'proofloop' ? /"url":/.test(l) : /running at http/.test(l),
  );
  urlLine.catch(() => undefined); // awaited below; not unhandled meanwhile
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await watchPainted(page, [folder.promptPrefix, folder.textPrefix]);
  process.stderr.write(`peer: ${viewer} page opened\n`);
  let out: Omit<ViewerFigures, 'process'> | null = null;
  let failure: Error | null = null;
  try {
    const printed = await urlLine;
    const url =
      viewer === 'proofloop'
        ? (JSON.parse(`{${printed.line.trim().replace(/,$/, '')}}`) as { url: string }).url
        : `http://localhost:${port}/`; // claude-run listens on localhost (::1 or 127.0.0.1)
    const t0 = performance.now() - printed.ms; // the spawn, on this clock
    // claude-run prints its URL just before it listens: a refused connection is tried again.
    for (let tries = 0; ; tries++) {
      try {
        await page.goto(url, { waitUntil: 'commit', timeout: 300_000 });
        break;
      } catch (e) {
        if (tries > 600 || !/ERR_CONNECTION_REFUSED/.test((e as Error).message)) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    // The page's own stamps (bench/painted.ts), converted to this clock once the page is idle.
    const listedP = paintedEpoch(page, folder.promptPrefix, 300_000);
    listedP.catch(() => undefined); // awaited below; not unhandled meanwhile
    const loaded = await loadedEpoch(page);
    const listed = await listedP;
    // Clicked as soon as it is painted: Playwright's own checks (visible, stable over two frames,
    // receives the click) are the same for both viewers.
    await page.getByText(folder.promptPrefix).first().click({ timeout: 300_000 });
    const first = await paintedEpoch(page, folder.textPrefix, 300_000);
    const pressed = await pressedEpoch(page);
    const here = await pageClock(page);
    const since = (epoch: number) => Math.round(here(epoch) - t0);
    out = {
      url_ms: Math.round(printed.ms),
      page_loaded_ms: since(loaded),
      session_listed_ms: since(listed),
      pressed_ms: pressed === null ? null : since(pressed),
      first_messages_ms: since(first),
    };
    process.stderr.write(
      `peer: ${viewer} URL ${out.url_ms} ms, loaded ${out.page_loaded_ms}, listed ${out.session_listed_ms}, ` +
        `pressed ${out.pressed_ms}, first messages ${out.first_messages_ms}\n`,
    );
    await new Promise((r) => setTimeout(r, SETTLE_MS));
  } catch (e) {
    failure = e as Error;
  }
  await page.close();
  const f = await run.stop();
  if (!out) {
    const done = await run.done.catch(() => null);
    throw new Error(
      `${viewer} did not show the session (${failure?.message}): ${(done?.stderr ?? '').slice(-600)}`,
    );
  }
  return { ...out, process: figures(f) };
}

async function compare(
  browser: Browser,
  root: string,
  folder: Folder,
  peerBin: string | null,
  rounds: number,
  warmUp: boolean,
) {
  const runs: { proofloop: ViewerFigures[]; 'claude-run': ViewerFigures[] } = {
    proofloop: [],
    'claude-run': [],
  };
  const errors: string[] = [];
  const viewers = (first: 'proofloop' | 'claude-run') =>
    (first === 'claude-run'
      ? (['claude-run', 'proofloop'] as const)
      : (['proofloop', 'claude-run'] as const)
    ).filter((v) => v === 'proofloop' || peerBin);
  // A fresh PROOFLOOP_HOME each start: the folder opened for the first time, its ledger built.
  const start = async (v: 'proofloop' | 'claude-run') => {
    const home = mkdtempSync(path.join(root, 'home-'));
    try {
      return await timeViewer(browser, v, folder, peerBin ?? '', home);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  };
  // One unmeasured start of each first: every measured start then meets what a user who has run
  // the viewer before meets, the OS's cache of its files warm and ProofLoop's code cache written
  // (electron/cli/code-cache.ts). Not for the big folder, where a start is a small part of the time.
  if (warmUp) for (const v of viewers('claude-run')) await start(v).catch(() => undefined);
  for (let i = 0; i < rounds; i++) {
    for (const v of viewers(i % 2 === 0 ? 'claude-run' : 'proofloop')) {
      try {
        runs[v].push(await start(v));
      } catch (e) {
        // One viewer failing keeps the other's figures, and says why.
        errors.push(`${v}: ${(e as Error).message.slice(0, 500)}`);
      }
    }
  }
  const summary = (v: ViewerFigures[]) =>
    v.length === 0
      ? null
      : {
          first_messages_ms: v.map((x) => x.first_messages_ms),
          peak_rss_mb: v.map((x) => x.process.peak_rss_mb),
          first_messages_median_ms: med(v.map((x) => x.first_messages_ms)),
          // Where the time went, medians from the start: URL printed, page loaded, session listed.
          phases_median_ms: {
            url: med(v.map((x) => x.url_ms)),
            loaded: med(v.map((x) => x.page_loaded_ms)),
            listed: med(v.map((x) => x.session_listed_ms)),
            // From the listed row's paint to the page's receiving the press (the driver's click),
            // and from the press to first messages (the page's answer).
            list_to_press: med(
              v.flatMap((x) => (x.pressed_ms === null ? [] : [x.pressed_ms - x.session_listed_ms])),
            ),
            press_to_first: med(
              v.flatMap((x) => (x.pressed_ms === null ? [] : [x.first_messages_ms - x.pressed_ms])),
            ),
          },
          peak_rss_median_mb: med(v.map((x) => x.process.peak_rss_mb)),
        };
  const pl = summary(runs.proofloop);
  const cr = summary(runs['claude-run']);
  const both = pl && cr ? { pl, cr } : null;
  return {
    ...(errors.length ? { errors } : {}),
    folder_mb: folder.mb,
    sessions: folder.sessions,
    proofloop: pl,
    [PEER.name]: cr,
    ratio: both
      ? {
          first_messages: Number(
            (both.pl.first_messages_median_ms! / both.cr.first_messages_median_ms!).toFixed(2),
          ),
          // How far that ratio may be from the machine's noise alone: 95% of the ratios of the
          // medians of rounds drawn again at random from each viewer's own (a bootstrap).
          first_messages_95: ratioInterval(both.pl.first_messages_ms, both.cr.first_messages_ms).map((x) =>
            Number(x.toFixed(2)),
          ),
          peak_rss: Number((both.pl.peak_rss_median_mb! / both.cr.peak_rss_median_mb!).toFixed(2)),
        }
      : null,
    goal_ok: both
      ? {
          no_slower: both.pl.first_messages_median_ms! <= both.cr.first_messages_median_ms!,
          no_more_memory: both.pl.peak_rss_median_mb! <= both.cr.peak_rss_median_mb!,
        }
      : null,
    runs,
  };
}

export async function benchPeer(only?: 'small' | 'big') {
  if (!existsSync(CHROMIUM_LAUNCH.executablePath))
    return { skipped: `${CHROMIUM_LAUNCH.executablePath} is missing (apt-get install -y chromium)` };
  const root = mkdtempSync(path.join(tmpdir(), 'pl-bench-peer-'));
  const browser = await chromium.launch(CHROMIUM_LAUNCH);
  try {
    const peer = installPeer(root);
    const peerBin = 'bin' in peer ? peer.bin : null;
    const out: Obj = {
      peer: `${PEER.name}@${PEER.version}`,
      ...('error' in peer ? { peer_error: peer.error } : {}),
    };
    const rounds = process.env.PL_BENCH_PEER_ROUNDS ? Number(process.env.PL_BENCH_PEER_ROUNDS) : null;
    // Six on the small folder: on this shared machine one round of either viewer swings by ±15%,
    // and the ratio of the medians (4-10 rounds each) read from 0.99× to 1.28× within an hour.
    if (only !== 'big')
      out.small = await compare(browser, root, smallFolder(root), peerBin, rounds ?? 6, true);
    if (only !== 'small')
      out.big = await compare(
        browser,
        root,
        bigFolder(root, Number(process.env.PL_BENCH_PEER_BIG_MB ?? 200)),
        peerBin,
        rounds ?? 1,
        false,
      );
    out.load_average = Number(loadavg()[0]!.toFixed(1));
    return out;
  } finally {
    await browser.close();
    rmSync(root, { recursive: true, force: true });
  }
}

if (isMain('peer')) {
  const which = process.argv[2] as 'small' | 'big' | undefined;
  console.log(JSON.stringify(await benchPeer(which), null, 2));
}
