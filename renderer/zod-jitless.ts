import { config } from 'zod';

// No `new Function` probe: under the page's CSP (no 'unsafe-eval') it is reported as a violation,
// though zod catches it. Imported first by main.tsx, before any schema is built.
config({ jitless: true });
