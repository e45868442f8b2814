/**
 * The soak's API server in its own process: the embedded server with the Soak CRD, taking fault
 * commands over IPC (faults on Soak requests and watches only; leases are left alone so that
 * failover times measure the elector, not a faulted lease watch).
 */
import { startApiServer } from '@rxkube/apiserver';
import { createKubeClient, installCustomResourceDefinition } from '../../lib/kube/index.js';
import { MEMORY_SAMPLE_MS, SOAK_RESOURCE, soakCrd, type ServerCommand, type ServerMessage } from './model.js';

const send = (message: ServerMessage) => process.send?.(message);
const server = await startApiServer({ port: 0 });
await installCustomResourceDefinition(createKubeClient(server.kubeConfig()), soakCrd, { timeoutMs: 10_000 });

const later = (ms: number, action: () => void) => setTimeout(action, ms).unref();
process.on('message', (command: ServerCommand) => {
  const { faults } = server;
  switch (command.type) {
    case 'dropWatches':
      faults.dropWatches({ resource: SOAK_RESOURCE }, { abrupt: command.abrupt });
      break;
    case 'stallWatches': {
      const stall = faults.stallWatches({ resource: SOAK_RESOURCE });
      later(command.ms, () => stall.remove());
      break;
    }
    case 'failRequests': {
      const fault = faults.failRequests({ resource: SOAK_RESOURCE, status: command.status, fraction: command.fraction });
      later(command.ms, () => fault.remove());
      break;
    }
    case 'compact':
      faults.compact();
      break;
    case 'clear':
      faults.clear();
      break;
  }
});
setInterval(() => {
  const { heapUsed, rss } = process.memoryUsage();
  send({ type: 'memory', at: Date.now(), heapUsed, rss });
}, MEMORY_SAMPLE_MS).unref();
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
process.once('disconnect', () => void server.close().then(() => process.exit(0)));
send({ type: 'listening', url: server.url });
