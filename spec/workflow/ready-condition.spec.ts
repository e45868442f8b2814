import { expect } from 'chai';
import { primary, World } from './fakes.js';
import { DIAMOND, graph } from './graphs.js';

const NOW = new Date('2026-11-24T01:00:00Z');
/** The primary as a Kubernetes object with a generation, so observedGeneration shows. */
const object = { metadata: { name: 'p', generation: 7 } };

describe('workflow result: the Ready status condition', () => {
  it('True (DependentsReady) when every dependent is ready', async () => {
    const result = await graph(new World(), DIAMOND).reconcile(primary, {});
    expect(result.readyCondition(object, NOW)).to.deep.equal({
      type: 'Ready',
      status: 'True',
      reason: 'DependentsReady',
      message: 'every dependent is ready',
      lastTransitionTime: '2026-11-24T01:00:00Z',
      observedGeneration: 7,
    });
  });

  it('False (DependentsNotReady) naming the dependents not ready and those waiting behind them', async () => {
    const result = await graph(new World(), DIAMOND, { '2': { readyPostcondition: () => false } }).reconcile(primary, {});
    expect(result.readyCondition(object, NOW)).to.include({
      status: 'False',
      reason: 'DependentsNotReady',
      message: 'not ready yet: 2, 4',
    });
  });

  it('False (DependentsFailed) with each failed dependent and its error', async () => {
    const result = await graph(new World(), DIAMOND, { '3': { script: { failReconcile: 'quota exceeded' } } }).reconcile(primary, {});
    expect(result.readyCondition(object, NOW)).to.include({ status: 'False', reason: 'DependentsFailed', message: "'3': quota exceeded" });
  });

  it('keeps the earlier lastTransitionTime while the status holds', async () => {
    const result = await graph(new World(), DIAMOND).reconcile(primary, {});
    const before = { ...object, status: { conditions: [result.readyCondition(object, NOW)] } };
    expect(result.readyCondition(before, new Date('2026-11-24T02:00:00Z')).lastTransitionTime).to.equal('2026-11-24T01:00:00Z');
  });
});
