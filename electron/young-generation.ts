import { setFlagsFromString } from 'node:v8';

/**
 * The young generation's growth, for a process that serves a page: kept at its first size while
 * the work is small, let grow again when work that allocates a lot starts.
 *
 * V8 doubles the young generation (semi-spaces of 1 MiB, up to 16) whenever more bytes survive its
 * scavenges than it holds. Loading the service's modules is mostly survivors, so `serve` on a folder
 * of 5 small sessions grew it to 4 MiB semi-spaces and held ~6 MB more RSS than at 1 MiB, with no
 * speed a page's calls need (bench/peer.ts). A large import does need it: at the first size,
 * `proofloop open` of 300,000 events ran 15-25% slower (bench/open.ts). So it is kept small by
 * `serve` from the first line of `bin/proofloop.js` (before the bundle loads) and by the app; the
 * CLI lets it grow for every other command (cli/main.ts), and so does every worker thread's start
 * (workers.ts), which is how every large job here runs: a big import, snapshots, a bundle, a diff,
 * the gateway.
 *
 * `--semi-space-growth-factor` is read each time V8 grows the young generation (NewSpace::Grow) and
 * nowhere else, so setting it while running changes only the next growth. `--max-semi-space-size`,
 * the obvious flag, is read once when the heap is set up and cannot be changed from inside.
 */
export const keepYoungGenerationSmall = (): void => setFlagsFromString('--semi-space-growth-factor=1');

/** V8's default growth (doubling), for the work that allocates a lot. */
export const letYoungGenerationGrow = (): void => setFlagsFromString('--semi-space-growth-factor=2');
