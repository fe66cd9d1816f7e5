/**
 * Entry of the simulated model process. It talks to the host only through IPC messages (see
 * protocol.ts); it has no access to the ledger and never learns where the ledger is.
 */
import type { HostMessage, ModelMessage } from './protocol';
import { crashPoint, SimModel } from './sim-agent';

let model: SimModel | null = null;
let crashAt = Number.POSITIVE_INFINITY;

function send(msg: ModelMessage): void {
  process.send?.(msg);
}

function act(action: ReturnType<SimModel['next']>): void {
  if (model && model.count >= crashAt) {
    // The crashy variant dies mid-run, with a stack on stderr, before sending this action.
    throw new Error(`simulated model crash before action ${model.count}`);
  }
  send({ type: 'act', action });
}

process.on('message', (raw: HostMessage) => {
  try {
    if (raw.type === 'init') {
      model = new SimModel(raw.task, raw.variant, raw.seed);
      // A crash happens once: a model started to resume a run continues where the ledger stands.
      if (raw.variant === 'crashy' && !raw.resumed) crashAt = crashPoint(raw.task, raw.seed);
      // Fast-forward over the recorded steps: their actions are recomputed, not sent.
      let action = model.next(null);
      for (const obs of raw.history) action = model.next(obs);
      act(action);
    } else if (raw.type === 'observe') {
      if (!model) throw new Error('observe before init');
      act(model.next(raw.obs));
    }
  } catch (e) {
    if (model && model.count >= crashAt) throw e;
    send({ type: 'error', message: (e as Error).message });
  }
});

// The host went away (or was killed): the model has nobody to talk to.
process.on('disconnect', () => process.exit(0));
