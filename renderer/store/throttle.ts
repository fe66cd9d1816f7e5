/** `fn` at once, then at most once per `ms`: calls in between make one more call at the end. */
export function throttled(fn: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let pending = false;
  const fire = () => {
    pending = false;
    fn();
    timer = setTimeout(() => {
      timer = null;
      if (pending) fire();
    }, ms);
  };
  return () => {
    if (timer === null) fire();
    else pending = true;
  };
}
