/**
 * When the page last asked the service for something, in memory that worker threads share. Work
 * that is only a cache (the runs' snapshots) waits while someone is stepping through a run: on two
 * cores a snapshot build beside the page took ~20 ms of CPU a keyboard step and doubled the step's
 * p95 (bench/sessions.ts, serve_cpu_ms_per_step).
 */
export interface ActivityCell {
  buffer: SharedArrayBuffer;
  /** Date.now() the cell counts from: each thread has its own performance.timeOrigin. */
  base: number;
}

/** How long after the page's last call background work stays paused. */
export const QUIET_MS = 300;

export class Activity {
  // 64 bits: milliseconds since `base` pass 2^31 after 24.8 days, and serve may run for weeks.
  private readonly cell: BigInt64Array;

  private constructor(readonly shared: ActivityCell) {
    this.cell = new BigInt64Array(shared.buffer);
  }

  /** A new cell, never touched (as if the page's last call were long ago). */
  static create(): Activity {
    const a = new Activity({ buffer: new SharedArrayBuffer(8), base: Date.now() });
    Atomics.store(a.cell, 0, BigInt(-QUIET_MS));
    return a;
  }

  /** The cell another thread made (passed in workerData). */
  static of(shared: ActivityCell): Activity {
    return new Activity(shared);
  }

  touch(): void {
    Atomics.store(this.cell, 0, BigInt(Date.now() - this.shared.base));
  }

  /** Whether the page asked for something within the last QUIET_MS. */
  busy(): boolean {
    return Date.now() - this.shared.base - Number(Atomics.load(this.cell, 0)) < QUIET_MS;
  }
}
