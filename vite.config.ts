import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * The app's chunk (boot.tsx, imported by the small entry once it has asked the first reads) is
 * fetched as the HTML is parsed, beside the entry, not after the entry has run: Vite preloads what a
 * dynamic import needs, not the imported chunk itself.
 */
function preloadBoot(): Plugin {
  return {
    name: 'proofloop-preload-boot',
    apply: 'build',
    transformIndexHtml: {
      // After Vite's own: the bundle is known then.
      order: 'post',
      handler(_html, ctx) {
        const boot = Object.values(ctx.bundle ?? {}).find(
          (c) => c.type === 'chunk' && c.moduleIds.some((id) => id.endsWith('/renderer/boot.tsx')),
        );
        if (!boot) throw new Error('vite.config.ts: no chunk for renderer/boot.tsx to preload');
        return [
          {
            tag: 'link',
            attrs: { rel: 'modulepreload', crossorigin: true, href: `./${boot.fileName}` },
            injectTo: 'head',
          },
        ];
      },
    },
  };
}

// The renderer is one static bundle served by Electron (file://) or by `proofloop serve`.
export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react(), preloadBoot()],
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
