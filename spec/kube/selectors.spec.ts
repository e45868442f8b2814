import { expect } from 'chai';
import { formatFieldSelector, formatLabelSelector } from '../../lib/kube/index.js';

describe('kube/selectors', () => {
  it('ES8: formats label selectors from strings, equality maps and LabelSelector objects', () => {
    expect(formatLabelSelector(undefined)).to.equal('');
    expect(formatLabelSelector(' app=web ')).to.equal('app=web');
    expect(formatLabelSelector({ app: 'web', tier: 'front' })).to.equal('app=web,tier=front');
    expect(
      formatLabelSelector({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'stage'] },
          { key: 'canary', operator: 'NotIn', values: ['true'] },
          { key: 'owner', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }),
    ).to.equal('app=web,env in (prod,stage),canary notin (true),owner,!legacy');
  });

  it('ES8: formats field selectors', () => {
    expect(formatFieldSelector({ 'metadata.name': 'a', 'metadata.namespace': 'b' })).to.equal('metadata.name=a,metadata.namespace=b');
    expect(formatFieldSelector('status.phase!=Failed')).to.equal('status.phase!=Failed');
  });

  it('rejects malformed requirements with the key and operator named', () => {
    expect(() => formatLabelSelector({ matchExpressions: [{ key: 'env', operator: 'Has' }] })).to.throw(/operator 'Has' on 'env'/);
    expect(() => formatLabelSelector({ matchExpressions: [{ key: 'env', operator: 'In', values: [] }] })).to.throw(/In on 'env' needs/);
    expect(() => formatLabelSelector({ app: 'a,b' })).to.throw(/value 'a,b' of 'app'/);
  });
});
