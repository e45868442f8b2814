/**
 * What `rxkube init --webhooks` adds to the project of `templateFiles`: a second version of the
 * resource (v2, served, converted by a webhook; v1 stays the storage version and the hub), a
 * validating webhook, the conversion, their tests, and the webhooks in the operator's options.
 */

function replaceOnce(text: string, search: string, replacement: string, file: string): string {
  if (!text.includes(search))
    throw new Error(`template ${file}: '${search.slice(0, 40)}' not found (the template changed: update template-webhooks.ts)`);
  return text.replace(search, replacement);
}

/** The names of the project's resource (those of `TemplateOptions`). */
export interface WebhookTemplateNames {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
}

export function withWebhooks(files: Record<string, string>, { group, kind, plural }: WebhookTemplateNames): Record<string, string> {
  const lower = kind.toLowerCase();
  const upper = kind.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  const out = { ...files };
  const resourceFile = `src/${lower}.ts`;
  let resource = out[resourceFile];
  resource = replaceOnce(
    resource,
    `  versions: {\n    v1: {\n      spec: ${kind}Spec,`,
    `  versions: {\n    v1: {\n      storage: true,\n      spec: ${kind}Spec,`,
    resourceFile,
  );
  resource = replaceOnce(
    resource,
    `    },\n  },\n});\n`,
    `    },
    // v2 names the field \`recipient\`; objects are stored as v1 and converted by src/webhooks.ts.
    v2: {
      spec: Type.Object({
        recipient: Type.String({ minLength: 1, description: 'Who to greet.' }),
        salutation: Type.Optional(Type.String({ description: 'How (default "Hello").' })),
      }),
      status: ${kind}Status,
    },
  },
});
`,
    resourceFile,
  );
  resource = replaceOnce(
    resource,
    `export type ${kind} = ResourceOf<typeof ${kind}Resource>;`,
    `export type ${kind} = ResourceOf<typeof ${kind}Resource>;\nexport type ${kind}V2 = ResourceOf<typeof ${kind}Resource, 'v2'>;`,
    resourceFile,
  );
  out[resourceFile] = resource;

  out['src/webhooks.ts'] = `/**
 * The operator's webhooks, served by the operator (src/operator.ts) and registered by the
 * manifests (npm run manifests): a validating webhook for what the schema cannot say, and the
 * conversion between v1 (the hub, stored) and v2.
 */
import { allow, conversionWebhook, deny, spoke, validatingWebhook } from 'rxkube/webhooks';
import { ${upper}, type ${kind}, type ${kind}V2 } from './${lower}.js';

export const validate${kind} = validatingWebhook<${kind}>({
  name: 'validate.${plural}.${group}',
  resource: ${upper},
  validate: (req) => (req.object?.spec.name.trim() === '' ? deny('spec.name must not be blank', { code: 422, reason: 'Invalid' }) : allow()),
});

export const convert${kind} = conversionWebhook<${kind}>({
  group: '${group}',
  plural: '${plural}',
  hub: 'v1',
  spokes: {
    v2: spoke<${kind}V2, ${kind}>({
      toHub: ({ spec: { recipient, ...rest }, ...object }) => ({ ...object, spec: { ...rest, name: recipient } }),
      fromHub: ({ spec: { name, ...rest }, ...object }) => ({ ...object, spec: { ...rest, recipient: name } }),
    }),
  },
});

export const webhooks = [validate${kind}, convert${kind}];
`;

  out['test/webhooks.test.ts'] =
    `/** The webhooks without a cluster: reviews as the API server sends them, and the conversion's round trip. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admissionReviewFor, checkRoundTrip, reviewAdmission } from 'rxkube/webhooks';
import { ${lower}, type ${kind}, type ${kind}V2 } from '../src/${lower}.js';
import { convert${kind}, validate${kind} } from '../src/webhooks.js';

test('a blank name is denied with a message; a name is allowed', async () => {
  const denied = await reviewAdmission(validate${kind}, admissionReviewFor({ operation: 'CREATE', object: ${lower}('blank', { name: '  ' }) }));
  assert.equal(denied.response.allowed, false);
  assert.equal(denied.response.status?.message, 'spec.name must not be blank');
  const allowed = await reviewAdmission(validate${kind}, admissionReviewFor({ operation: 'CREATE', object: ${lower}('world', { name: 'world' }) }));
  assert.equal(allowed.response.allowed, true);
});

test('v1 and v2 convert to each other and back without losing anything', () => {
  const v2: ${kind}V2 = { apiVersion: '${group}/v2', kind: '${kind}', metadata: { name: 'world', namespace: 'default' }, spec: { recipient: 'world', salutation: 'Hi' } };
  checkRoundTrip(convert${kind}, [${lower}('world', { name: 'world', salutation: 'Hello' }), ${lower}('plain', { name: 'plain' }), v2]);
  assert.deepEqual((convert${kind}.convert(v2, 'v1') as ${kind}).spec, { salutation: 'Hi', name: 'world' });
});
`;

  let operator = out['src/operator.ts'];
  operator = replaceOnce(
    operator,
    `import type { Operator, OperatorOptions } from 'rxkube';\n`,
    `import type { Operator, OperatorOptions } from 'rxkube';\nimport { DEFAULT_WEBHOOK_PORT, mountedCertificate } from 'rxkube/webhooks';\n`,
    'src/operator.ts',
  );
  operator = replaceOnce(
    operator,
    `import { ${lower}Crd } from './${lower}.js';\n`,
    `import { ${lower}Crd } from './${lower}.js';\nimport { webhooks } from './webhooks.js';\n`,
    'src/operator.ts',
  );
  operator = replaceOnce(
    operator,
    `  stopTimeoutMs: 30_000,\n`,
    `  stopTimeoutMs: 30_000,\n` +
      `  // In the cluster: the certificate cert-manager writes into the Secret deploy/ mounts, on the port\n` +
      `  // the Service targets. npm run dev (rxkube dev) sets WEBHOOK_CERT_DIR to a development certificate and\n` +
      `  // WEBHOOK_PORT to a free port; src/main.ts makes its own for --embedded.\n` +
      `  webhooks: { webhooks, tls: mountedCertificate(process.env['WEBHOOK_CERT_DIR']), port: Number(process.env['WEBHOOK_PORT'] ?? DEFAULT_WEBHOOK_PORT) },\n`,
    'src/operator.ts',
  );
  out['src/operator.ts'] = operator;
  out['src/main.ts'] = replaceOnce(
    out['src/main.ts'],
    `  registry,\n`,
    `  registry,\n  webhooks: embedded ? { ...operatorOptions.webhooks!, tls: { development: true }, port: 0 } : operatorOptions.webhooks,\n`,
    'src/main.ts',
  );
  const pkg = JSON.parse(out['package.json']) as { devDependencies: Record<string, string> };
  // The development certificate of --embedded and npm run dev: Node makes keys, not X.509 certificates.
  pkg.devDependencies = { ...pkg.devDependencies, '@peculiar/x509': '^2.2.0', 'reflect-metadata': '^0.2.2' };
  out['package.json'] = `${JSON.stringify(pkg, null, 2)}\n`;
  out['README.md'] = replaceOnce(
    out['README.md'],
    `| \`test/integration.test.ts\` |`,
    `| \`src/webhooks.ts\` | a validating webhook and the v1 ⇄ v2 conversion, served by the operator |\n| \`test/webhooks.test.ts\` | the webhooks without a cluster: reviews and the conversion's round trip |\n| \`test/integration.test.ts\` |`,
    'README.md',
  ).replace(
    `## Deploy\n`,
    `## Deploy\n\nThe webhooks need cert-manager in the cluster: deploy/ holds an Issuer and a Certificate for the\nwebhook Service, and cert-manager's cainjector writes the CA into the webhook configurations and the CRD.\n` +
      'In `npm run dev` the webhooks are served on this machine instead: the dev loop points the webhook\n' +
      "configurations and the CRD's conversion at https://127.0.0.1:PORT with a development CA, and deletes the\n" +
      'webhook configurations when it stops.\n',
  );
  return out;
}
