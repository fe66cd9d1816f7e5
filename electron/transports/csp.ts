/**
 * The renderer's Content-Security-Policy, in the Electron window and in web mode: nothing from
 * elsewhere, no inline script or style (React sets styles through the CSSOM, which style-src does
 * not govern), no form submission anywhere, never framed.
 */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
