// The IPC channel names, shared by the main process (ipc.ts) and the preload. Imports nothing: the
// sandboxed preload bundles it.

/** One channel per contract method: `proofloop:<method>`. */
export const CHANNEL_PREFIX = 'proofloop:';
/** The one channel pushes travel on, as (channel, payload). */
export const PUSH_CHANNEL = 'proofloop:push';
/** The preload tells main the path of a folder dropped on the window (main confirms it with the user). */
export const DROP_CHANNEL = 'proofloop:dropped';
