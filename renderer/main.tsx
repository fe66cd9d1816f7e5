// No zod schema is built in the page: it imports only types from shared/api (and the names in
// surface.ts), so it starts without the contract's schemas, and zod's `new Function` probe never
// runs under the page's CSP (security.e2e.spec.ts fails on any CSP violation).
//
// The first script is small: it asks the first reads (api/early.ts), then fetches the app, which
// finds their answers on arrival instead of asking only once its ~440 KB are compiled and run.
import './api/early';
import './styles.css';

void import('./boot');
