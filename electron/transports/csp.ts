/** The renderer's Content-Security-Policy, in the Electron window and in web mode: nothing from elsewhere, no inline script. */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
