/**
 * Whether the page's push stream, when it first connects, may have missed a push its reads did not
 * see. Web mode's server counts the pushes it has sent ("<server>.<n>"): each call's answer carries
 * the count when the call began (`x-proofloop-pushes`), the stream's `hello` the count before it
 * listened. Pushes numbered above a read's count and up to the stream's were seen by neither, so the
 * page reads again (folder, runs, the selected run) unless every read began at or after the stream's
 * count. Without this the page read everything twice at each start, in the moments after its list
 * was first drawn (two more requests and a render, on two cores beside the server's own work).
 */
export interface PushGap {
  /** A call began; the returned function takes its answer's count (null: none, or it failed). */
  began(): (count: string | null) => void;
  /** Settles once every call begun so far has its answer (or none: it failed). */
  answered(): Promise<void>;
  /**
   * Whether a stream that says `hello` with this count may have missed what the reads answered so
   * far did not see. Ask once the calls begun before the hello are answered.
   */
  missed(hello: string): boolean;
}

const parse = (count: string): { server: string; n: number } | null => {
  const m = /^([\w-]+)\.(\d+)$/.exec(count);
  return m ? { server: m[1]!, n: Number(m[2]) } : null;
};

export function createPushGap(): PushGap {
  let server: string | null = null;
  let lowest = Infinity;
  // A read without a count (failed, or from a server that does not count) may have missed anything.
  let unknown = false;
  // The calls begun and not answered yet: each settles with its answer.
  const open = new Set<Promise<void>>();
  return {
    began() {
      let done = false;
      let settle!: () => void;
      const waiting = new Promise<void>((resolve) => (settle = resolve));
      open.add(waiting);
      return (count) => {
        if (done) return;
        done = true;
        open.delete(waiting);
        settle();
        const c = count === null ? null : parse(count);
        if (!c || (server !== null && c.server !== server)) {
          unknown = true;
          return;
        }
        server = c.server;
        lowest = Math.min(lowest, c.n);
      };
    },
    answered: () => Promise.all([...open]).then(() => undefined),
    missed(hello) {
      const h = parse(hello);
      if (!h || unknown || server === null || h.server !== server) return true;
      return lowest < h.n;
    },
  };
}
