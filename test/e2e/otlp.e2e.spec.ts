import { test, expect } from './helpers/fixtures';
import { sender } from '../integration/helpers/otel-sender';

// An agent instrumented with the real OpenTelemetry JS SDK sends to the OTLP receiver of the
// `proofloop serve` the page talks to; its run appears and grows in the inspector as it sends.
test('an OTLP run arrives live in the inspector', async ({ app, server, page }) => {
  expect(server.otlp).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  const snd = sender(server.otlp!, 'proto');
  const c = { 'gen_ai.conversation.id': 'e2e-live' };
  try {
    await app.open();
    const chat = snd.span('chat gpt-test', {
      ...c,
      'gen_ai.operation.name': 'chat',
      'gen_ai.usage.input_tokens': 50,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.output.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'call_1', name: 'read_file', arguments: { path: 'a.py' } }],
        },
      ]),
    });
    await snd.end(chat);
    await expect(app.runItem('otlp-e2e-live')).toBeVisible();
    // An OTLP run opens on its span tree (otlp-spans.e2e.spec.ts); this test reads its events.
    await app.runItem('otlp-e2e-live').click();
    await expect(page.getByTestId('span-row')).toHaveCount(1);
    await page.getByTestId('tab-timeline').click();
    await expect(app.row(1)).toBeVisible();
    await expect(page.getByTestId('read-only')).toBeVisible();
    await expect(page.getByTestId('follow-toggle')).toHaveAttribute('aria-pressed', 'true');
    await expect(app.row(1)).toHaveAttribute('data-kind', 'model_proposed');

    const tool = snd.span('execute_tool read_file', {
      ...c,
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'read_file',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.call.result': 'print(1)',
    });
    await snd.end(tool);
    await app.expectSeq(3, 3);
    await expect(app.row(2)).toHaveAttribute('data-kind', 'tool_invoked');
    await expect(app.row(3)).toHaveAttribute('data-kind', 'tool_returned');

    await snd.log('claude_code.tool_decision', {
      'session.id': 'e2e-live',
      tool_name: 'Bash',
      decision: 'reject',
      source: 'user_reject',
    });
    await app.expectSeq(4, 4);
    await expect(app.row(4)).toHaveAttribute('data-kind', 'action_denied');
    await expect(app.runItem('otlp-e2e-live')).toContainText('4 ev');
    await app.screenshot('otlp-live');
  } finally {
    await snd.shutdown();
  }
});
