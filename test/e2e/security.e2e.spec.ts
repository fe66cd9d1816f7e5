import { test, expect } from './helpers/fixtures';
import { appendRun, DEMO_EVENTS } from './helpers/runs';

test('web mode: the page takes the token out of its URL, and runs under the CSP without a violation', async ({
  app,
  server,
  page,
}) => {
  // Every CSP violation of the page (an inline style or script the policy blocks), as it happens.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (globalThis as unknown as { cspViolations: string[] }).cspViolations = seen;
    type Violation = {
      violatedDirective: string;
      blockedURI: string;
      sourceFile: string;
      lineNumber: number;
    };
    const doc = (
      globalThis as unknown as { document: { addEventListener(t: string, f: (e: Violation) => void): void } }
    ).document;
    doc.addEventListener('securitypolicyviolation', (e) =>
      seen.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  await appendRun(server, 'demo', DEMO_EVENTS);
  await app.open('#/run/demo/seq/2');
  // The route stays, the token is gone from the address bar (and so from history).
  await expect(page).toHaveURL(new RegExp(`^${server.base}/#/run/demo/seq/2$`));
  expect(page.url()).not.toContain(server.token);
  await app.expectSeq(2);
  // Calls and the push stream still work: a step, the state panel, a run appended live.
  await app.press('ArrowRight');
  await app.expectSeq(3);
  await appendRun(server, 'later', DEMO_EVENTS.slice(0, 2));
  await expect(app.runItem('later')).toBeVisible();
  // A reload keeps the tab's token (sessionStorage), not the URL.
  await page.reload();
  await expect(app.runItem('later')).toBeVisible();
  const violations = await page.evaluate(
    () => (globalThis as unknown as { cspViolations: string[] }).cspViolations,
  );
  expect(violations).toEqual([]);
  // The page is served with the CSP that allows no inline style and no form target.
  const res = await page.request.get(`${server.base}/`);
  expect(res.headers()['content-security-policy']).toMatch(/style-src 'self';.*form-action 'none'/);
});
