// Admission and conversion webhooks behind a Service (docs/apiserver.md): the server reaches
// `my-webhook` in `my-system` at a local address, and checks its certificate for my-webhook.my-system.svc.
import { startApiServer } from '@rxkube/apiserver';

const server = await startApiServer({ webhookServices: { 'my-system/my-webhook:443': '127.0.0.1:9443' } });
console.log(`serving ${server.url}; webhook Service my-system/my-webhook at 127.0.0.1:9443`);
await server.close();
