// Kept apart from ipc.ts so it loads without Electron (tests run it directly).
import { err, type Result } from '../../shared/result';
import type { ProofloopService } from '../service/service';

/** One IPC call: the sender is checked first, then the service validates the arguments. */
export async function handleIpcCall<E>(
  service: ProofloopService,
  isTrusted: (e: E) => boolean,
  method: string,
  event: E,
  args: unknown,
): Promise<Result<unknown>> {
  if (!isTrusted(event)) {
    return err('unauthorized', `${method}: call from an untrusted frame refused`);
  }
  return service.call(method, args, 'renderer');
}
