import { useEffect, useState } from 'react';
import { useApp } from '../../store';
import { ErrorBox } from '../../ui/ErrorBox';
import { Modal } from '../../ui/Modal';
import { VARIANTS, VARIANT_TEXT } from '../../../shared/api/variants';
import type { Variant } from '../../store/tasksSlice';
import type { AgentInfo, RunSummary } from '../../api/types';
import { runAgentOf } from '../runs/runAgent';
import { byText } from '../../ui/numbers';

type Source = 'sim' | 'replay' | 'upstream';

/** The agents to list before (or without) agents.list: ProofLoop's own, which is always there. */
const BUILTIN: AgentInfo = {
  name: 'sim',
  title: 'ProofLoop’s simulated agent',
  installed: true,
  version: null,
  detail: 'built in',
  upstream: null,
};

/** Finished runs of `agent` on `task` this folder holds, newest first: what a replay source can be. */
function recordedRuns(runs: RunSummary[] | null, agent: string, task: string): RunSummary[] {
  return (runs ?? [])
    .filter(
      (r) =>
        r.source === 'executed' &&
        r.task_id === task &&
        runAgentOf(r)?.agent === agent &&
        (r.status === 'completed' || r.status === 'failed'),
    )
    .sort((a, b) => byText(b.created_at, a.created_at));
}

function AgentChoice({
  agents,
  value,
  onChange,
}: {
  agents: AgentInfo[];
  value: string;
  onChange: (name: string) => void;
}) {
  return (
    <fieldset className="task-choice" data-testid="agent-choice">
      <legend>Agent</legend>
      {agents.map((a) => (
        <label
          key={a.name}
          className={`radio${a.installed ? '' : ' unavailable'}`}
          data-testid="agent-option"
          data-agent={a.name}
          data-installed={a.installed ? 'true' : 'false'}
        >
          <span>
            <input
              type="radio"
              name="agent"
              value={a.name}
              checked={value === a.name}
              disabled={!a.installed}
              onChange={() => onChange(a.name)}
            />{' '}
            <b>{a.title}</b>{' '}
            {a.installed ? (
              a.version && <span className="chip mono">{a.version}</span>
            ) : (
              <span className="chip">not installed</span>
            )}
          </span>
          <span className="dim hint" data-testid="agent-detail">
            {a.name === 'sim' ? 'built in: the host runs the loop, the variant is the model' : a.detail}
          </span>
        </label>
      ))}
    </fieldset>
  );
}

function SourceChoice({
  agent,
  task,
  value,
  onChange,
  replayOf,
  onReplayOf,
}: {
  agent: AgentInfo;
  task: string;
  value: Source;
  onChange: (s: Source) => void;
  replayOf: string;
  onReplayOf: (runId: string) => void;
}) {
  const runs = useApp((s) => s.runs);
  const recorded = recordedRuns(runs, agent.name, task);
  const keys = agent.upstream?.key_env ?? [];
  const option = (id: Source, label: string, hint: React.ReactNode, disabled = false) => (
    <label className={`radio${disabled ? ' unavailable' : ''}`} data-testid={`source-${id}`}>
      <span>
        <input
          type="radio"
          name="model-from"
          value={id}
          checked={value === id}
          disabled={disabled}
          onChange={() => onChange(id)}
        />{' '}
        <b>{label}</b>
      </span>
      <span className="dim hint">{hint}</span>
    </label>
  );
  return (
    <fieldset className="task-choice" data-testid="source-choice">
      <legend>Model answers from</legend>
      {option(
        'sim',
        'Simulated (sim)',
        <>
          the variant answers as the model, in {agent.title}’s own tools: no key, nothing leaves this machine
        </>,
      )}
      {option(
        'replay',
        'Replay of a recorded run',
        recorded.length === 0 ? (
          <>
            no finished run of {agent.title} on {task} in this folder yet
          </>
        ) : (
          <>its recorded answers, request by request; a request that differs is a divergence, never served</>
        ),
        recorded.length === 0,
      )}
      {value === 'replay' && recorded.length > 0 && (
        <select
          className="input mono source-run"
          value={replayOf || recorded[0]!.run_id}
          onChange={(e) => onReplayOf(e.target.value)}
          data-testid="replay-source-select"
          aria-label="Recorded run to replay"
        >
          {recorded.map((r) => (
            <option key={r.run_id} value={r.run_id}>
              {r.run_id} · {r.outcome ?? r.status}
            </option>
          ))}
        </select>
      )}
      {option(
        'upstream',
        'Upstream (the real API)',
        <span data-testid="upstream-note">
          your key from ProofLoop’s environment ({keys.length ? keys.join(' or ') : 'the API key variable'}
          {agent.upstream ? (agent.upstream.key_set ? ': set' : ': not set, so not offered') : ''}). The agent
          never sees it and nothing stores it; its requests, with what it reads of the workspace, go to the
          API.
        </span>,
        agent.upstream !== null && !agent.upstream.key_set,
      )}
    </fieldset>
  );
}

/** Start a task: the task, the agent (simulated or a real CLI), its variant and model source; then watch the run live. */
export function TaskPanel() {
  const tasks = useApp((s) => s.tasks);
  const tasksError = useApp((s) => s.tasksError);
  const loadTasks = useApp((s) => s.loadTasks);
  const agents = useApp((s) => s.agents);
  const loadAgents = useApp((s) => s.loadAgents);
  const startTask = useApp((s) => s.startTask);
  const busy = useApp((s) => s.actionBusy);
  const actionError = useApp((s) => s.actionError);
  const close = useApp((s) => s.setOverlay);
  const [task, setTask] = useState('');
  const [variant, setVariant] = useState<Variant | ''>('');
  const [agentName, setAgentName] = useState('sim');
  const [source, setSource] = useState<Source>('sim');
  const [replayOf, setReplayOf] = useState('');
  const catalogErrors = useApp((s) => s.catalogErrors);
  const [seed, setSeed] = useState('');
  const folder = useApp((s) => s.folder);
  // Another program's folder (a Claude Code projects folder): runs go to ProofLoop's own directory.
  const elsewhere = folder?.runs_root && folder.runs_root !== folder.folder ? folder.runs_root : null;

  useEffect(() => {
    void loadTasks();
    void loadAgents();
  }, [loadTasks, loadAgents]);

  const list = agents ?? [BUILTIN];
  const agent = list.find((a) => a.name === agentName && a.installed) ?? BUILTIN;
  const real = agent.name !== 'sim';
  const chosen = tasks?.find((t) => t.id === (task || tasks[0]?.id));
  const runs = useApp((s) => s.runs);
  const recorded = chosen && real ? recordedRuns(runs, agent.name, chosen.id) : [];
  const replayRun = replayOf && recorded.some((r) => r.run_id === replayOf) ? replayOf : recorded[0]?.run_id;
  // A source that cannot be used (nothing recorded, no key) is not offered: the choice falls back to sim.
  const usable = (x: Source) =>
    x === 'sim' || (x === 'replay' ? Boolean(replayRun) : !agent.upstream || agent.upstream.key_set);
  const from: Source = real && usable(source) ? source : 'sim';
  // The variant is what the simulated model does: it decides nothing when the answers are recorded or real.
  const variantApplies = from === 'sim';
  const seedNum = seed.trim() === '' ? null : Number(seed);
  const seedOk = !variantApplies || seedNum === null || Number.isInteger(seedNum);

  return (
    <Modal
      title="Start a task"
      label="Start a task"
      testId="task-panel"
      className="task-panel"
      onClose={() => close(null)}
    >
      {tasksError && <ErrorBox error={tasksError} what="Listing tasks" onRetry={() => void loadTasks()} />}
      {!tasks && !tasksError && <div className="loading">Loading tasks…</div>}
      {tasks && tasks.length === 0 && <div className="empty">No tasks found in the task catalog.</div>}
      {catalogErrors.length > 0 && (
        <ul className="findings">
          {catalogErrors.map((e, i) => (
            <li key={i} className="mono">
              {e.file} {e.field}: {e.message}
            </li>
          ))}
        </ul>
      )}
      {tasks && tasks.length > 0 && (
        <form
          className="task-form"
          onSubmit={async (e) => {
            e.preventDefault();
            if (!chosen || !seedOk) return;
            await startTask({
              task: chosen.id,
              variant: variantApplies ? variant || null : null,
              seed: variantApplies ? seedNum : null,
              agent: agent.name,
              modelFrom: !real ? null : from === 'replay' ? `replay:${replayRun}` : from,
            });
            if (!useApp.getState().actionError) close(null);
          }}
        >
          <label>
            Task
            <select
              className="input"
              value={chosen?.id ?? ''}
              onChange={(e) => setTask(e.target.value)}
              data-testid="task-select"
            >
              {tasks.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.id}
                  {t.title !== t.id ? ` — ${t.title}` : ''}
                </option>
              ))}
            </select>
          </label>
          {chosen && (
            <p className="dim task-goal">
              {chosen.goal} · judged by <code>{chosen.judge_command}</code> · budget {chosen.budget.steps}{' '}
              steps
            </p>
          )}
          <AgentChoice agents={list} value={agent.name} onChange={setAgentName} />
          {!agents && <p className="dim task-goal">Looking for Claude Code and Codex…</p>}
          {real && chosen && (
            <SourceChoice
              agent={agent}
              task={chosen.id}
              value={from}
              onChange={setSource}
              replayOf={replayRun ?? ''}
              onReplayOf={setReplayOf}
            />
          )}
          <label>
            Variant
            <select
              className="input"
              value={variantApplies ? variant : ''}
              disabled={!variantApplies}
              onChange={(e) => setVariant(e.target.value as Variant | '')}
              data-testid="variant-select"
            >
              <option value="">default (careful)</option>
              {VARIANTS.map((v) => (
                <option key={v} value={v} title={VARIANT_TEXT[v]}>
                  {v} — {VARIANT_TEXT[v]}
                </option>
              ))}
            </select>
          </label>
          <p className="dim task-goal" data-testid="variant-text">
            {variantApplies
              ? VARIANT_TEXT[variant || 'careful']
              : from === 'replay'
                ? 'none: the recorded run’s answers decide what the agent does'
                : 'none: the real model decides what the agent does'}
          </p>
          {variantApplies && (
            <label>
              Seed
              <input
                className="input mono"
                value={seed}
                onChange={(e) => setSeed(e.target.value)}
                placeholder={real ? '1' : '0'}
                inputMode="numeric"
                data-testid="seed-input"
              />
            </label>
          )}
          <p className="dim task-where" data-testid="task-where">
            {elsewhere ? (
              <>
                This folder belongs to another program: ProofLoop writes nothing into it. The run’s folder
                (workspace, artifacts, events.jsonl{real ? ', the agent’s private home' : ''}) goes to{' '}
                <code>{elsewhere}</code>, and the run is listed here.
              </>
            ) : (
              <>
                The run’s folder (workspace, artifacts, events.jsonl{real ? ', the agent’s private home' : ''}
                ) goes into <code>{folder?.folder ?? 'the open folder'}</code>.
              </>
            )}
          </p>
          {!seedOk && <div className="bad-text">seed must be a whole number</div>}
          {actionError && <ErrorBox error={actionError} what="Starting the task" />}
          <div className="row-gap task-actions">
            <button type="submit" className="btn primary" disabled={busy || !seedOk} data-testid="start-task">
              {busy ? 'Starting…' : 'Start and watch'}
            </button>
            {real && <span className="dim">{agent.title} runs headless; a run takes a minute or so.</span>}
          </div>
        </form>
      )}
    </Modal>
  );
}
