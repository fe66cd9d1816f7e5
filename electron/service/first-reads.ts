/**
 * How long after the folder's opening import began a list waits for its end. A page asks as soon
 * as it is parsed (renderer/api/early.ts), often while a small folder's import is still under way:
 * without the wait its list came with a few of the runs and was drawn again with the rest a moment
 * later. A big folder's first runs are listed by then, the rest pushed as they commit.
 */
const FIRST_LIST_WAIT_MS = 150;
/** The page's first reads (early.ts): alike, so that each answer's push count follows the import's pushes. */
const WAITS_FOR_OPENING = new Set(['folder.current', 'runs.list', 'folder.findings']);

/** The page's first reads of a folder whose opening import runs in the background (see ready). */
export class FirstReads {
  private until = 0;
  private opening: Promise<unknown> = Promise.resolve();

  /** A folder's opening import began; `opening` settles when it ends or is stopped. */
  began(opening: Promise<unknown>): void {
    this.opening = opening;
    this.until = performance.now() + FIRST_LIST_WAIT_MS;
  }

  /**
   * Settles when a call of `method` may read: a list asked in the first moments of the opening
   * import waits for its end, until FIRST_LIST_WAIT_MS after it began. The web transport waits for
   * it before it takes the push count the answer carries, since what is read after the wait has
   * seen the pushes made during it.
   */
  ready(method: string): Promise<void> {
    const left = this.until - performance.now();
    if (left <= 0 || !WAITS_FOR_OPENING.has(method)) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, left)));
    return Promise.race([this.opening, late])
      .then(() => undefined)
      .finally(() => clearTimeout(timer));
  }
}
