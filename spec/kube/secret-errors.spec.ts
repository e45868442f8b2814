/**
 * Issue 32: a failed write of a Secret carries none of the values it sent, whatever the server or
 * the transport put in the error (a 422 quoting them, a policy's message, a proxy's error text).
 */
import { expect } from 'chai';
import { resourceClient } from '../../lib/kube/client.js';
import { builtinResources, KubeApiError, type RequestFn } from '../../lib/kube/index.js';

const VALUE = 'p4ssw0rd-canary';
const ENCODED = Buffer.from(VALUE).toString('base64');

describe('kube/client: a failed Secret write carries none of the values it sent (issue 32)', () => {
  const echoing: RequestFn = async (req) => {
    const body = JSON.stringify(req.body);
    throw new KubeApiError(
      422,
      { kind: 'Status', code: 422, reason: 'Invalid', message: `refused: ${body}`, details: { causes: [{ message: `value ${VALUE}` }] } },
      {},
      { method: req.method, path: req.path },
    );
  };
  const throwing: RequestFn = async (req) => {
    const error = new Error(`proxy said: ${JSON.stringify(req.body)}`);
    // V8 writes the stack's first line when it is first read: read, it holds the message as thrown.
    void error.stack;
    throw error;
  };

  it('blanks data (base64 and decoded), stringData (plain and base64) in a KubeApiError: message, Status and causes', async () => {
    const secrets = resourceClient(echoing, builtinResources.secret);
    for (const write of [
      () => secrets.create({ metadata: { name: 's', namespace: 'default' }, data: { password: ENCODED } } as never),
      () => secrets.create({ metadata: { name: 's', namespace: 'default' }, stringData: { password: VALUE } } as never),
      () => secrets.mergePatch({ name: 's', namespace: 'default' }, { data: { password: ENCODED } }),
      () => secrets.jsonPatch({ name: 's', namespace: 'default' }, [{ op: 'replace', path: '/data/password', value: ENCODED }]),
    ]) {
      const error = await write().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(KubeApiError);
      const text = JSON.stringify({ message: (error as KubeApiError).message, body: (error as KubeApiError).body });
      expect(text).not.to.include(VALUE);
      expect(text).not.to.include(ENCODED);
      expect((error as KubeApiError).message).to.include('[redacted]');
      expect((error as KubeApiError).code).to.equal(422);
    }
  });

  it('blanks them in any other error, its stack too; other resources are left as they are', async () => {
    const error = (await resourceClient(throwing, builtinResources.secret)
      .create({ metadata: { name: 's', namespace: 'default' }, stringData: { password: VALUE } } as never)
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as Error;
    expect(error.message).to.include('[redacted]').and.not.to.include(VALUE);
    expect(error.stack).not.to.include(VALUE);
    const configMapError = (await resourceClient(throwing, builtinResources.configMap)
      .create({ metadata: { name: 'c', namespace: 'default' }, data: { password: VALUE } } as never)
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as Error;
    expect(configMapError.message).to.include(VALUE);
  });
});
