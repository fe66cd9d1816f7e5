// The preload: the renderer's whole view of the main process. It exposes the contract's methods and
// push channels as `window.proofloop`, and nothing else: no ipcRenderer, no generic channel.
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import { PUSH_NAMES } from '../shared/api/contract';
import { RENDERER_METHODS } from '../shared/api/surface';
import { CHANNEL_PREFIX, DROP_CHANNEL, PUSH_CHANNEL } from './transports/ipc-channels';

// The renderer's surface only (shared/api/surface.ts); main registers no other channel.
const methods = new Set<string>(RENDERER_METHODS);
const channels = new Set<string>(PUSH_NAMES);

contextBridge.exposeInMainWorld('proofloop', {
  call(method: string, args: unknown) {
    if (!methods.has(method)) {
      return Promise.resolve({
        ok: false,
        error: { code: 'bad_args', message: `unknown method "${method}"` },
      });
    }
    return ipcRenderer.invoke(CHANNEL_PREFIX + method, args);
  },
  subscribe(channel: string, fn: (payload: unknown) => void) {
    if (!channels.has(channel)) throw new Error(`unknown push channel "${channel}"`);
    const listener = (_e: IpcRendererEvent, ch: string, payload: unknown) => {
      if (ch === channel) fn(payload);
    };
    ipcRenderer.on(PUSH_CHANNEL, listener);
    return () => ipcRenderer.removeListener(PUSH_CHANNEL, listener);
  },
});

// A folder dropped on the window. Chromium would navigate to its file: URL (main refuses every
// navigation); instead the preload takes the path from the browser's own drop event (isTrusted: not
// one a script dispatched) and main asks the user before opening it.
// The window's DOM, typed here: the main-process tsconfig has no DOM library.
interface DropEvent {
  readonly isTrusted: boolean;
  preventDefault(): void;
  readonly dataTransfer: { readonly files: ArrayLike<Parameters<typeof webUtils.getPathForFile>[0]> } | null;
}
const page = globalThis as unknown as {
  addEventListener(type: 'dragover' | 'drop', fn: (e: DropEvent) => void, capture: boolean): void;
};
page.addEventListener('dragover', (e) => e.preventDefault(), true);
page.addEventListener(
  'drop',
  (e) => {
    e.preventDefault();
    if (!e.isTrusted) return;
    const file = e.dataTransfer?.files[0];
    const dropped = file ? webUtils.getPathForFile(file) : '';
    if (dropped) ipcRenderer.send(DROP_CHANNEL, dropped);
  },
  true,
);
