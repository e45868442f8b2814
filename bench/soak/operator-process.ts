/**
 * One soak operator in its own process: leader election, a finalizer, and a reconciler that
 * fails `failRate` of its runs and otherwise writes status {observedGeneration, value}. Reports
 * runs, leadership and memory to the orchestrator over IPC; logs (info and up) go to `logFile`.
 * Settings come as JSON in argv[2] (OperatorSettings).
 */
import { pino } from 'pino';
import { DeleteControl, Operator, UpdateControl, type Reconciler } from '../../lib/index.js';
import { createLogger } from '../../lib/observe/index.js';
import {
  kubeConfigFor,
  MEMORY_SAMPLE_MS,
  LEASE_NAME,
  NAMESPACE,
  SOAK,
  type OperatorMessage,
  type OperatorSettings,
  type Soak,
} from './model.js';

const settings = JSON.parse(process.argv[2] ?? '') as OperatorSettings;
const send = (message: OperatorMessage) => process.send?.(message);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Marks the start of user code in a run (the outcome has the run's own bounds), then works a little. */
async function work(soak: Soak): Promise<void> {
  send({ type: 'begin', name: soak.metadata?.name ?? '', at: Date.now() });
  await pause(2 + Math.random() * 20);
  if (Math.random() < settings.failRate) throw new Error('injected reconcile failure');
}

const reconciler: Reconciler<Soak> = {
  async reconcile(soak) {
    await work(soak);
    return UpdateControl.patchStatus({ ...soak, status: { observedGeneration: soak.metadata?.generation ?? 0, value: soak.spec.value } });
  },
  async cleanup(soak) {
    await work(soak);
    return DeleteControl.defaultDelete();
  },
};

const kubeConfig = kubeConfigFor(settings.url);
const logger = createLogger({
  name: settings.identity,
  level: 'info',
  destination: pino.destination({ dest: settings.logFile, sync: false }),
});
const operator = new Operator({
  kubeConfig,
  logger,
  health: { port: 0, host: '127.0.0.1' },
  handleSignals: true,
  stopTimeoutMs: 5_000,
  leaderElection: {
    leaseName: LEASE_NAME,
    leaseNamespace: NAMESPACE,
    identity: settings.identity,
    leaseDurationMs: settings.leaseDurationMs,
    renewDeadlineMs: settings.renewDeadlineMs,
    retryPeriodMs: settings.retryPeriodMs,
    logger,
  },
});
const controller = operator.register(reconciler, { resource: SOAK, namespaces: [NAMESPACE] });
controller.outcome$.subscribe((o) => send({ type: 'run', name: o.id.name, startedAt: o.startedAt, endedAt: o.endedAt, result: o.result }));
operator.isLeader$.subscribe((leader) => send({ type: 'leader', leader, at: Date.now() }));
const memory = setInterval(() => {
  const { heapUsed, rss } = process.memoryUsage();
  send({ type: 'memory', at: Date.now(), heapUsed, rss });
}, MEMORY_SAMPLE_MS);
// SIGTERM: the operator's own handler stops it; then nothing holds the process (nor the IPC channel).
process.once('SIGTERM', () => clearInterval(memory));
process.channel?.unref();
process.once('disconnect', () => void operator.stop().then(() => process.exit(0)));
try {
  await operator.start();
} catch (err) {
  process.stderr.write(`${settings.identity}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
send({ type: 'started', identity: settings.identity, healthUrl: operator.healthUrl ?? '' });
