import { expect } from 'chai';
import { escapeFieldSelectorValue, matchesFieldSelector, parseFieldSelector } from '../src/grammar/field-selector.js';
import {
  SelectorError,
  formatLabelSelector,
  labelSelectorFromObject,
  matchesLabelSelector,
  parseLabelSelector,
} from '../src/grammar/label-selector.js';

function selectorError(fn: () => unknown): SelectorError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(SelectorError);
    return err as SelectorError;
  }
  throw new Error('expected a SelectorError');
}

const matches = (selector: string, labels?: Record<string, string>) => matchesLabelSelector(parseLabelSelector(selector), labels);

describe('apiserver/selectors', () => {
  describe('label selector operators', () => {
    it('= and == match an equal value only', () => {
      expect(matches('app=web', { app: 'web' })).to.equal(true);
      expect(matches('app==web', { app: 'web' })).to.equal(true);
      expect(matches('app=web', { app: 'db' })).to.equal(false);
      expect(matches('app=web', {})).to.equal(false);
      expect(matches('app=web', undefined)).to.equal(false);
    });

    it('!= matches a different value or a missing label', () => {
      expect(matches('app!=web', { app: 'db' })).to.equal(true);
      expect(matches('app!=web', {})).to.equal(true);
      expect(matches('app!=web', { app: 'web' })).to.equal(false);
    });

    it('in and notin', () => {
      expect(matches('env in (prod, staging)', { env: 'staging' })).to.equal(true);
      expect(matches('env in (prod,staging)', { env: 'dev' })).to.equal(false);
      expect(matches('env in (prod,staging)', {})).to.equal(false);
      expect(matches('env notin (prod,staging)', { env: 'dev' })).to.equal(true);
      expect(matches('env notin (prod,staging)', {})).to.equal(true);
      expect(matches('env notin (prod,staging)', { env: 'prod' })).to.equal(false);
    });

    it('exists (key) and does-not-exist (!key)', () => {
      expect(matches('app', { app: '' })).to.equal(true);
      expect(matches('app', { other: 'x' })).to.equal(false);
      expect(matches('!app', { other: 'x' })).to.equal(true);
      expect(matches('!app', { app: 'x' })).to.equal(false);
    });

    it('> and < compare integers and never match a non-integer label', () => {
      expect(matches('replicas>2', { replicas: '3' })).to.equal(true);
      expect(matches('replicas>2', { replicas: '2' })).to.equal(false);
      expect(matches('replicas<2', { replicas: '1' })).to.equal(true);
      expect(matches('replicas<2', { replicas: 'x' })).to.equal(false);
      expect(matches('replicas<2', {})).to.equal(false);
    });

    it('requirements are ANDed, and the empty selector matches everything', () => {
      expect(matches('app=web,tier in (fe),!canary', { app: 'web', tier: 'fe' })).to.equal(true);
      expect(matches('app=web,tier in (fe),!canary', { app: 'web', tier: 'fe', canary: 'y' })).to.equal(false);
      expect(matches('', { any: 'thing' })).to.equal(true);
      expect(matches('   ', undefined)).to.equal(true);
    });

    it('accepts prefixed keys and values with . _ -', () => {
      expect(matches('app.kubernetes.io/name=my_app-1.2', { 'app.kubernetes.io/name': 'my_app-1.2' })).to.equal(true);
    });

    it('treats in/notin as plain words in key and value position', () => {
      expect(matches('in in (in)', { in: 'in' })).to.equal(true);
      expect(matches('notin=in', { notin: 'in' })).to.equal(true);
    });

    it('empty values: "a=", "a in ()" and "a in (,x)"', () => {
      expect(matches('a=', { a: '' })).to.equal(true);
      expect(matches('a=', { a: 'x' })).to.equal(false);
      expect(matches('a in ()', { a: '' })).to.equal(true);
      expect(parseLabelSelector('a in (,x)').requirements[0].values).to.deep.equal(['', 'x']);
    });

    it('parses into sorted requirements and formats canonically', () => {
      const selector = parseLabelSelector('z in (b,a,b),  a!=1,!m, k, n>3');
      expect(selector.requirements.map((r) => r.key)).to.deep.equal(['a', 'k', 'm', 'n', 'z']);
      expect(selector.requirements[4]).to.deep.equal({ key: 'z', operator: 'In', values: ['a', 'b'] });
      expect(formatLabelSelector(selector)).to.equal('a!=1,k,!m,n>3,z in (a,b)');
    });
  });

  describe('malformed label selectors', () => {
    const bad: Array<[string, string]> = [
      ['app=web,', "found 'end of string', expected: identifier after ','"],
      [',app', "found ',', expected: !, identifier"],
      ['app in prod', "found 'prod', expected: '('"],
      ['app in (a b)', "found 'b', expected: ',' or ')'"],
      ['app in (a', "found 'end of string'"],
      ['app=web=db', "found '=', expected: ',' or 'end of string'"],
      ['app web', "found 'web'"],
      ['app=(x)', "found '(', expected: identifier"],
      ['!app=web', "found '='"],
      ['-app=web', 'key "-app" is invalid'],
      ['a/b/c=x', "at most one '/'"],
      ['Example.com/app=x', 'prefix part'],
      ['app=-bad', 'value "-bad" for key "app" is invalid'],
      [`app=${'x'.repeat(64)}`, 'no more than 63 characters'],
      ['n>x', 'must be an integer'],
    ];
    for (const [text, fragment] of bad) {
      it(`rejects ${JSON.stringify(text)}`, () => {
        const err = selectorError(() => parseLabelSelector(text));
        expect(err.message).to.contain(JSON.stringify(text));
        expect(err.message).to.contain(fragment);
      });
    }
  });

  describe('labelSelectorFromObject (metav1.LabelSelector)', () => {
    it('combines matchLabels and matchExpressions', () => {
      const selector = labelSelectorFromObject({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['fe', 'be'] },
          { key: 'canary', operator: 'DoesNotExist' },
        ],
      });
      expect(matchesLabelSelector(selector, { app: 'web', tier: 'be' })).to.equal(true);
      expect(matchesLabelSelector(selector, { app: 'web', tier: 'be', canary: 'y' })).to.equal(false);
      expect(matchesLabelSelector(selector, { app: 'web', tier: 'x' })).to.equal(false);
      expect(matchesLabelSelector(labelSelectorFromObject({}), { a: 'b' })).to.equal(true);
    });

    it('rejects bad operators and value lists', () => {
      expect(
        selectorError(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] })).message,
      ).to.contain('matchExpressions[0].operator "Gt"');
      expect(
        selectorError(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).message,
      ).to.contain('must be non-empty');
      expect(
        selectorError(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).message,
      ).to.contain('must be empty');
      expect(selectorError(() => labelSelectorFromObject({ matchLabels: { 'bad key': 'x' } })).message).to.contain('matchLabels.bad key');
    });
  });

  describe('field selectors', () => {
    const allowed = ['metadata.name', 'metadata.namespace', 'status.phase', 'spec.nodeName'] as const;

    it('=, == and != on allowed fields, comma-joined', () => {
      const selector = parseFieldSelector('metadata.name=web,status.phase!=Failed', allowed);
      expect(matchesFieldSelector(selector, { 'metadata.name': 'web', 'status.phase': 'Running' })).to.equal(true);
      expect(matchesFieldSelector(selector, { 'metadata.name': 'web', 'status.phase': 'Failed' })).to.equal(false);
      expect(matchesFieldSelector(selector, { 'metadata.name': 'db', 'status.phase': 'Running' })).to.equal(false);
      expect(matchesFieldSelector(parseFieldSelector('metadata.namespace==ns1', allowed), { 'metadata.namespace': 'ns1' })).to.equal(true);
    });

    it('a missing field reads as the empty string', () => {
      expect(matchesFieldSelector(parseFieldSelector('spec.nodeName=', allowed), {})).to.equal(true);
      expect(matchesFieldSelector(parseFieldSelector('spec.nodeName!=', allowed), {})).to.equal(false);
      expect(matchesFieldSelector(parseFieldSelector('spec.nodeName!=', allowed), { 'spec.nodeName': 'n1' })).to.equal(true);
    });

    it('the empty selector and empty terms match everything', () => {
      expect(parseFieldSelector('', allowed).requirements).to.deep.equal([]);
      expect(parseFieldSelector('metadata.name=a,,', allowed).requirements).to.have.length(1);
    });

    it('unescapes \\, \\= and \\\\ in values', () => {
      const selector = parseFieldSelector('metadata.name=a\\,b\\=c\\\\d', allowed);
      expect(selector.requirements[0].value).to.equal('a,b=c\\d');
      expect(escapeFieldSelectorValue('a,b=c\\d')).to.equal('a\\,b\\=c\\\\d');
    });

    it('names an unsupported field', () => {
      const err = selectorError(() => parseFieldSelector('metadata.name=a,spec.replicas=3', allowed));
      expect(err.message).to.contain('field label not supported: spec.replicas');
    });

    it('rejects a term without an operator, an unescaped = and a bad escape', () => {
      expect(selectorError(() => parseFieldSelector('metadata.name', allowed)).message).to.contain(`can't understand "metadata.name"`);
      expect(selectorError(() => parseFieldSelector('metadata.name==a=b', allowed)).message).to.contain('unescaped "="');
      expect(selectorError(() => parseFieldSelector('metadata.name=a\\x', allowed)).message).to.contain('invalid escape sequence "\\x"');
      expect(selectorError(() => parseFieldSelector('metadata.name=a\\', allowed)).message).to.contain('single "\\"');
    });
  });
});

describe('apiserver/selectors selectable fields', () => {
  it('every kind has metadata.name and metadata.namespace; Pods, Secrets and Events have their own', async () => {
    const { selectableFields, selectableFieldValues } = await import('../src/grammar/field-selector.js');
    expect(selectableFields('example.com', 'Widget')).to.deep.equal(['metadata.name', 'metadata.namespace']);
    expect(selectableFields('', 'Pod')).to.include('spec.nodeName').and.include('status.phase');
    expect(selectableFields('', 'Secret')).to.include('type');
    expect(selectableFields('', 'Event')).to.include('involvedObject.name').and.include('source');

    const pod = { metadata: { name: 'p', namespace: 'ns' }, spec: { nodeName: 'n1', hostNetwork: true }, status: { phase: 'Running' } };
    const values = selectableFieldValues(pod, '', 'Pod');
    expect(values).to.deep.equal({
      'metadata.name': 'p',
      'metadata.namespace': 'ns',
      'spec.nodeName': 'n1',
      'spec.hostNetwork': 'true',
      'status.phase': 'Running',
    });
    const selector = parseFieldSelector('spec.nodeName=n1,status.phase!=Failed,spec.hostNetwork=true', selectableFields('', 'Pod'));
    expect(matchesFieldSelector(selector, values)).to.equal(true);

    const event = {
      metadata: { name: 'e', namespace: 'ns' },
      involvedObject: { kind: 'Pod', name: 'p' },
      source: { component: 'kubelet' },
      type: 'Warning',
    };
    const eventValues = selectableFieldValues(event, '', 'Event');
    expect(eventValues['source']).to.equal('kubelet');
    expect(eventValues['involvedObject.kind']).to.equal('Pod');
    expect(selectableFieldValues({ metadata: { name: 'cluster-scoped' } }, '', 'Namespace')['metadata.namespace']).to.equal('');
  });
});
