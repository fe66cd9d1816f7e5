import { ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { RENDERER_METHODS } from '../../shared/api/surface';
import type { ProofloopService } from '../service/service';
import { handleIpcCall } from './ipc-call';
import { CHANNEL_PREFIX, PUSH_CHANNEL } from './ipc-channels';

/**
 * One `ipcMain.handle` per method of the renderer's surface (no channel exists for the rest). A call is answered only for the app's own window and
 * top frame (never a foreign frame or a navigated page), and its arguments are validated by the
 * service against the contract.
 */
export function registerIpc(
  service: ProofloopService,
  isTrusted: (e: IpcMainInvokeEvent) => boolean,
): () => void {
  for (const method of RENDERER_METHODS) {
    ipcMain.handle(CHANNEL_PREFIX + method, (event, args: unknown) =>
      handleIpcCall(service, isTrusted, method, event, args),
    );
  }
  return () => {
    for (const method of RENDERER_METHODS) ipcMain.removeHandler(CHANNEL_PREFIX + method);
  };
}

export function forwardPushes(service: ProofloopService, target: () => WebContents | null): () => void {
  return service.onPush((channel, payload) => {
    const wc = target();
    if (wc && !wc.isDestroyed()) wc.send(PUSH_CHANNEL, channel, payload);
  });
}
