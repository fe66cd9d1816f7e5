import { test, expect, AppPage } from './helpers/fixtures';
import { serve } from './helpers/server';
import { sender } from '../integration/helpers/otel-sender';

/**
 * Issue 29, item 9: a run received over OTLP is titled by its service and prompt, opens on its span
 * tree (nested by parent span id, each span with its duration and a bar on one time axis), draws a
 * large trace a screenful at a time, and says when it went idle rather than staying "running".
 * Sent with the real OpenTelemetry JS SDK (proto exporter) to `proofloop serve`'s receiver.
 */
/**
 * Waits until `ms` have passed on performance.now(), the clock the SDK stamps spans with: a timer
 * may fire a fraction of a millisecond early on it (a CI run measured a 30 ms hold as 29.975 ms).
 */
async function holdFor(ms: number): Promise<void> {
  const t = performance.now();
  while (performance.now() - t < ms)
    await new Promise((r) => setTimeout(r, ms - (performance.now() - t) + 1));
}

test('an OTLP run: titled by service and prompt, its span tree with timings, idle after a quiet period', async ({
  page,
  folder,
}) => {
  // A short quiet period, so that the run's going idle is seen within the test.
  const server = await serve(folder, { env: { PROOFLOOP_OTLP_IDLE_MS: '4000' } });
  const app = new AppPage(page, server);
  const snd = sender(server.otlp!, 'proto');
  const c = { 'gen_ai.conversation.id': 'e2e-tree' };
  try {
    await app.open();
    const root = snd.span('invoke_agent coder', { ...c, 'gen_ai.operation.name': 'invoke_agent' });
    const chat = snd.span(
      'chat gpt-test',
      {
        ...c,
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'system', parts: [{ type: 'text', content: 'You are a careful coder.' }] },
          { role: 'user', parts: [{ type: 'text', content: 'Fix the failing test in utils.py' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'call_1', name: 'read_file', arguments: { path: 'utils.py' } }],
          },
        ]),
      },
      root,
    );
    await holdFor(30);
    await snd.end(chat);
    const tool = snd.span(
      'execute_tool read_file',
      {
        ...c,
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'read_file',
        'gen_ai.tool.call.id': 'call_1',
      },
      root,
    );
    const fs = snd.span('fs.read', { ...c }, tool);
    await new Promise((r) => setTimeout(r, 20));
    await snd.end(fs);
    await snd.end(tool, { error: 'permission denied' });
    await new Promise((r) => setTimeout(r, 10));
    await snd.end(root);

    // The list titles it by the sender's service and the prompt it carried.
    const item = app.runItem('otlp-e2e-tree');
    await expect(item.getByTestId('run-item-title')).toHaveText(
      'otel-sdk-test · Fix the failing test in utils.py',
    );
    await item.click();
    await expect(page.getByTestId('run-title')).toHaveText('otlp-e2e-tree');

    // It opens on its span tree: the root first, its children by start time, the tool's child under it.
    await expect(page.getByTestId('tab-spans')).toHaveAttribute('aria-selected', 'true');
    const rows = page.getByTestId('span-row');
    await expect(rows).toHaveCount(4);
    const names = await rows.getByTestId('span-name').allTextContents();
    expect(names).toEqual(['invoke_agent coder', 'chat gpt-test', 'execute_tool read_file', 'fs.read']);
    expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-depth')))).toEqual([
      '0',
      '1',
      '1',
      '2',
    ]);
    // Durations: the root holds its children; the chat lasted at least the 30 ms it was held open.
    const dur = await rows.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-duration-ms'))));
    expect(dur[1]).toBeGreaterThanOrEqual(30);
    expect(dur[0]).toBeGreaterThanOrEqual(dur[1]! + dur[2]!);
    expect(dur[2]).toBeGreaterThanOrEqual(dur[3]!);
    await expect(rows.nth(1).getByTestId('span-duration')).toHaveText(/^\d+(\.\d)? ms$/);
    // The failed tool span reads as an error.
    await expect(rows.nth(2)).toHaveClass(/is-error/);
    // A bar a span on one axis: the fs.read bar lies inside its parent's.
    const bar = async (i: number) => (await rows.nth(i).locator('.span-bar').boundingBox())!;
    const [toolBar, fsBar] = [await bar(2), await bar(3)];
    expect(fsBar.x).toBeGreaterThanOrEqual(toolBar.x - 1);
    expect(fsBar.x + fsBar.width).toBeLessThanOrEqual(toolBar.x + toolBar.width + 1);

    // A click selects the span's first event: its payload is that span's record.
    await rows.nth(3).click();
    const seq = await rows.nth(3).getAttribute('data-seq');
    await expect(page.getByTestId('payload-view')).toHaveAttribute('data-seq', seq!);
    await expect(page.getByTestId('payload-view')).toContainText('fs.read');
    await app.screenshot('otlp-span-tree');

    // No more spans: the run goes idle (not failed, not running for ever), and says what that means.
    await expect(page.getByTestId('run-status')).toContainText('idle', { timeout: 20_000 });
    await expect(page.getByTestId('otlp-liveness')).toContainText('nothing received for a quiet period');
    // A new span makes it running again.
    await snd.end(snd.span('chat again', { ...c, 'gen_ai.operation.name': 'chat' }));
    await expect(page.getByTestId('run-status')).toContainText('running');
    await expect(rows).toHaveCount(5);
  } finally {
    await snd.shutdown();
    await server.stop();
  }
});

/** One OTLP/JSON request of `n` spans, each the parent of the next (a deep trace). */
function chainBody(n: number) {
  const t0 = 1_780_000_000_000_000_000n;
  const id = (i: number) => i.toString(16).padStart(16, '0');
  const spans = Array.from({ length: n }, (_, i) => ({
    traceId: 'ab'.repeat(16),
    spanId: id(i + 1),
    ...(i > 0 ? { parentSpanId: id(i) } : {}),
    name: `step ${i}`,
    kind: 1,
    startTimeUnixNano: (t0 + BigInt(i) * 1_000_000n).toString(),
    endTimeUnixNano: (t0 + BigInt(2 * n - i) * 1_000_000n).toString(),
    attributes: [{ key: 'gen_ai.conversation.id', value: { stringValue: 'e2e-deep' } }],
  }));
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'deep-agent' } }] },
        scopeSpans: [{ scope: { name: 'e2e' }, spans }],
      },
    ],
  };
}

test('a trace of 3,000 nested spans: the tree draws the rows in view, every depth reachable', async ({
  app,
  server,
  page,
}) => {
  const n = 3000;
  const res = await fetch(`${server.otlp}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chainBody(n)),
  });
  expect(res.status).toBe(200);
  await app.open();
  await app.runItem('otlp-e2e-deep').click();
  const tree = page.getByTestId('span-tree');
  await expect(tree).toHaveAttribute('data-spans', String(n));
  const drawn = await page.getByTestId('span-row').count();
  expect(drawn).toBeGreaterThan(5);
  expect(drawn).toBeLessThan(120);
  // The last span is the deepest: scrolled to the end, it is drawn at depth n - 1.
  await tree.locator('.span-scroll').evaluate((el) => (el.scrollTop = el.scrollHeight));
  await expect(page.locator(`[data-testid="span-row"][data-depth="${n - 1}"]`)).toBeVisible();
  await expect(page.locator(`[data-testid="span-row"][data-depth="${n - 1}"]`)).toContainText(
    `step ${n - 1}`,
  );
});
