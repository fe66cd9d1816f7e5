/**
 * How the browser tests and the UI bench launch Debian's Chromium: the system binary (Playwright's
 * own download is never used) with the flags a headless, offline, shared machine needs.
 */
export const CHROMIUM_LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
};
