// The preload: the renderer's whole view of the main process. It exposes the contract's methods and
// push channels as `window.proofloop`, and nothing else: no ipcRenderer, no generic channel.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { METHOD_NAMES, PUSH_NAMES } from '../shared/api/contract';
import { CHANNEL_PREFIX, PUSH_CHANNEL } from './transports/ipc-channels';

const methods = new Set<string>(METHOD_NAMES);
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
