import { ApiException } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createLogger, errorLogLevel, loggerFor, resourceBindings } from '../../lib/observe/index.js';
import { AggregatedOperatorError } from '../../lib/workflow/index.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
  return { lines, destination };
}

const page = {
  apiVersion: 'sample.rxkube.dev/v1',
  kind: 'WebPage',
  metadata: { name: 'home', namespace: 'web', resourceVersion: '42', generation: 3, uid: 'u-1', labels: { a: 'b' } },
  spec: { html: '<p/>' },
};

describe('observe/logging', () => {
  it('OB1: every line of a run logger carries the controller and resource.{apiVersion,kind,name,namespace,resourceVersion,generation,uid}', () => {
    const { lines, destination } = capture();
    const base = createLogger({ destination, level: 'debug', name: 'operator' });
    const log = loggerFor(base, 'webpages', page);
    log.info('reconciling');
    log.child({ step: 'configmap' }).debug({ created: true }, 'dependent');
    expect(lines).to.have.length(2);
    for (const line of lines) {
      expect(line['controller']).to.equal('webpages');
      expect(line['name']).to.equal('operator');
      expect(line['resource']).to.deep.equal({
        apiVersion: 'sample.rxkube.dev/v1',
        kind: 'WebPage',
        name: 'home',
        namespace: 'web',
        resourceVersion: '42',
        generation: 3,
        uid: 'u-1',
      });
    }
    expect(lines[0]?.['msg']).to.equal('reconciling');
    expect(lines[1]).to.include({ step: 'configmap', created: true, level: 20 });
  });

  it('OB1: leaves out fields the object does not have (cluster-scoped, no generation)', () => {
    expect(resourceBindings({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web', uid: 'u' } })).to.deep.equal({
      resource: { apiVersion: 'v1', kind: 'Namespace', name: 'web', uid: 'u' },
    });
    expect(resourceBindings(undefined)).to.deep.equal({ resource: {} });
  });

  it('Maps and Sets are written with their entries: a failed workflow logs byDependent and dependents, not {}', () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination });
    const failure = new AggregatedOperatorError(new Map([['configmap', new Error('configmaps is forbidden')]]));
    log.error(
      { err: failure, dependents: new Map([['configmap', { outcome: 'errored', ready: false }]]), names: new Set(['configmap']) },
      'run failed',
    );
    const [line] = lines;
    const err = line?.['err'] as Record<string, unknown>;
    expect(err['type']).to.equal('AggregatedOperatorError');
    expect(err['byDependent']).to.deep.include.keys('configmap');
    expect((err['byDependent'] as Record<string, Record<string, unknown>>)['configmap']).to.include({
      type: 'Error',
      message: 'configmaps is forbidden',
    });
    expect(line?.['dependents']).to.deep.equal({ configmap: { outcome: 'errored', ready: false } });
    expect(line?.['names']).to.deep.equal(['configmap']);
    const cyclic: Record<string, unknown> = { map: new Map([['a', 1]]) };
    cyclic['self'] = cyclic;
    log.info({ cyclic, when: new Date(0) }, 'cyclic');
    expect(lines[1]?.['cyclic']).to.deep.equal({ map: { a: 1 }, self: '[Circular]' });
    expect(lines[1]?.['when']).to.equal('1970-01-01T00:00:00.000Z');
  });

  it("a Kubernetes object anywhere in a line, or in an error, is written as its reference: a Secret's data never reaches a log", () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination });
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'web' }, data: { password: 'c2VjcmV0LXZhbHVl' } };
    const failure = Object.assign(new Error('write failed'), { object: secret });
    log.error(
      {
        err: failure,
        desired: [secret],
        nested: { map: new Map([['db', secret]]) },
        status: { kind: 'Status', metadata: {}, message: 'kept' },
      },
      'failed',
    );
    log.info(secret, 'an object logged whole');
    const text = lines.map((l) => JSON.stringify(l)).join('\n');
    expect(text).not.to.include('c2VjcmV0LXZhbHVl');
    const reference = { apiVersion: 'v1', kind: 'Secret', namespace: 'web', name: 'db' };
    expect(lines[0]?.['desired']).to.deep.equal([reference]);
    expect(lines[0]?.['nested']).to.deep.equal({ map: { db: reference } });
    expect((lines[0]?.['err'] as Record<string, unknown>)['object']).to.deep.equal(reference);
    expect(lines[0]?.['status']).to.deep.include({ message: 'kept' });
  });

  it('respects the level', () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination, level: 'warn' });
    log.info('hidden');
    log.warn('shown');
    expect(lines.map((l) => l['msg'])).to.deep.equal(['shown']);
  });

  it('UP2: a conflict is logged at info, a transient failure at warn, anything else at error', () => {
    const api = (code: number) => new ApiException(code, 'x', { kind: 'Status', code }, {});
    expect(errorLogLevel(api(409))).to.equal('info');
    expect(errorLogLevel(api(503))).to.equal('warn');
    expect(errorLogLevel(api(429))).to.equal('warn');
    expect(errorLogLevel(api(422))).to.equal('error');
    expect(errorLogLevel(new Error('bug'))).to.equal('error');
  });
});
