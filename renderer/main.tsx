// No zod schema is built in the page: it imports only types from shared/api (and the names in
// surface.ts), so it starts without the contract's schemas, and zod's `new Function` probe never
// runs under the page's CSP (security.e2e.spec.ts fails on any CSP violation).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { startSync } from './store/sync';
import './styles.css';

startSync();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
