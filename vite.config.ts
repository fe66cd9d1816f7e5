import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The renderer is one static bundle served by Electron (file://) or by `proofloop serve`.
export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: true,
    rollupOptions: {
      // zod's sources carry /* @__PURE__ */ notes in places Rollup cannot use; harmless, and noisy.
      onwarn(warning, warn) {
        if (warning.code === 'INVALID_ANNOTATION') return;
        warn(warning);
      },
    },
  },
});
