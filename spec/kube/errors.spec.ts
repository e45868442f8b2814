import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createServer } from 'node:net';
import { classifyError, createKubeClient, errorMessage, statusCodeOf } from '../../lib/kube/index.js';
import { reasonOf, retryAfterMs } from '../../lib/kube/errors.js';

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('kube/errors', () => {
  it('classifies client-node ApiExceptions by code, whether the body is text or parsed', () => {
    const cases: Array<[number, string]> = [
      [404, 'notFound'],
      [409, 'conflict'],
      [410, 'gone'],
      [422, 'invalid'],
      [400, 'invalid'],
      [403, 'forbidden'],
      [401, 'unauthorized'],
      [429, 'tooManyRequests'],
      [500, 'transient'],
      [503, 'transient'],
      [418, 'unknown'],
    ];
    for (const [code, kind] of cases) {
      const text = new ApiException(code, 'x', JSON.stringify(status(code, 'R', 'm')), {});
      expect(classifyError(text), `code ${code}`).to.equal(kind);
      expect(statusCodeOf(text)).to.equal(code);
    }
    // generated APIs throw 401 with no body at all
    expect(classifyError(new ApiException(401, 'Unauthorized', undefined, {}))).to.equal('unauthorized');
  });

  it('classifies a bare Status (a watch ERROR event) and reads its reason', () => {
    const expired = status(410, 'Expired', 'too old resource version: 1 (5)');
    expect(classifyError(expired)).to.equal('gone');
    expect(reasonOf(expired)).to.equal('Expired');
    expect(classifyError({ kind: 'Status', reason: 'Expired', message: 'x' })).to.equal('gone');
  });

  it('classifies a refused connection from a real client-node request as transient', async () => {
    const port = await closedPort();
    const kc = new KubeConfig();
    kc.loadFromClusterAndUser({ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }, { name: 'u' });
    const configMaps = createKubeClient(kc).resource({ apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' });
    const err = await configMaps.get({ name: 'x', namespace: 'default' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.not.equal(undefined);
    expect(classifyError(err)).to.equal('transient');
    expect(statusCodeOf(err)).to.equal(undefined);
    expect(errorMessage(err)).to.match(/ECONNREFUSED/);
  });

  it('treats a request timeout as transient and other unknown errors as unknown', () => {
    expect(classifyError(new DOMException('timed out', 'TimeoutError'))).to.equal('transient');
    expect(classifyError(new Error('boom'))).to.equal('unknown');
    expect(classifyError(undefined)).to.equal('unknown');
  });

  it('gives a readable message from the Status body', () => {
    const err = new ApiException(409, 'x', JSON.stringify(status(409, 'Conflict', 'the object has been modified')), {});
    expect(errorMessage(err)).to.equal('409 Conflict: the object has been modified');
    expect(errorMessage(status(410, 'Expired', 'too old'))).to.equal('410 Expired: too old');
  });

  it('reads Retry-After from details or the header', () => {
    const body = { ...status(429, 'TooManyRequests', 'slow down'), details: { retryAfterSeconds: 3 } };
    expect(retryAfterMs(new ApiException(429, 'x', body, {}))).to.equal(3000);
    expect(retryAfterMs(new ApiException(429, 'x', 'busy', { 'retry-after': '2' }))).to.equal(2000);
    expect(retryAfterMs(new Error('x'))).to.equal(undefined);
  });
});
