import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { startSync } from './store/sync';

// When the app's code starts, for the profiler's timeline (and the test that its first reads precede it).
performance.mark('proofloop:app');

startSync();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
