import { test, expect } from '@playwright/test';
import { paintedEpoch, pressedEpoch, watchPainted } from '../../bench/painted';

/**
 * The peer bench's clock for "on screen" (bench/painted.ts): the page stamps the frame that first
 * shows a text, whenever it comes, and a text in the DOM but hidden only once it is shown.
 */
test('bench/painted.ts stamps the first frame that shows a text, a hidden text only once shown, and the first press', async ({
  page,
}) => {
  await watchPainted(page, ['words that come late', 'words kept hidden']);
  const html = `<body><div id="h" style="display:none">words kept hidden</div><script>
    const now = () => performance.timeOrigin + performance.now();
    setTimeout(() => {
      const p = document.createElement('p');
      p.textContent = 'words that come late';
      document.body.append(p);
      window.added = now();
    }, 150);
    setTimeout(() => {
      document.getElementById('h').style.display = 'block';
      window.shown = now();
    }, 400);
  </script></body>`;
  await page.goto(`data:text/html,${encodeURIComponent(html)}`);
  const late = await paintedEpoch(page, 'words that come late', 10_000);
  const hidden = await paintedEpoch(page, 'words kept hidden', 10_000);
  const { added, shown } = await page.evaluate(() => {
    const w = globalThis as unknown as { added: number; shown: number };
    return { added: w.added, shown: w.shown };
  });
  // Stamped at the frame after the change (how soon is the bench's to measure, not a test's), and
  // the hidden text not while it was in the DOM unseen.
  expect(late).toBeGreaterThanOrEqual(added);
  expect(hidden).toBeGreaterThanOrEqual(shown);

  // The first pointer press, stamped by the page as it receives it (a click's driver's part ends).
  expect(await pressedEpoch(page)).toBeNull();
  const before = await page.evaluate(() => performance.timeOrigin + performance.now());
  await page.getByText('words that come late').click();
  const pressed = await pressedEpoch(page);
  expect(pressed).not.toBeNull();
  expect(pressed!).toBeGreaterThanOrEqual(before);
});
