// The IPC channel names, shared by the main process (ipc.ts) and the preload. Imports nothing: the
// sandboxed preload bundles it.

/** One channel per contract method: `proofloop:<method>`. */
export const CHANNEL_PREFIX = 'proofloop:';
/** The one channel pushes travel on, as (channel, payload). */
export const PUSH_CHANNEL = 'proofloop:push';
