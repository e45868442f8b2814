import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import { builtinResources } from '../../lib/kube/index.js';
import { Informer } from '../../lib/cache/index.js';
import { configMapAt, FakeListWatch, virtualClock } from './fake-list-watch.js';

/**
 * ES1, OB3: an operator cut off from the API server by a partition that black-holes its
 * connections (nothing answered, nothing refused): the open watch goes silent, and every request
 * after it hangs. The informer turns unhealthy — /readyz 503 — `timeoutSeconds + 2 × deadMarginMs`
 * after the watch last delivered something: the watch is judged dead after its timeout plus the
 * margin and resumed at once (a dead connection the resumed watch replaces is no failure), and the
 * resumed request, unanswered within the margin, is the failure.
 */
describe('cache: readiness after a network partition (ES1, OB3)', () => {
  it('ES1, OB3: an informer whose connections are black-holed turns unhealthy timeoutSeconds + 2 × deadMarginMs after its watch last delivered, not before', async () => {
    const clock = virtualClock();
    const fake = new FakeListWatch(clock);
    const inf = new Informer<KubernetesObject>({
      resource: builtinResources.configMap,
      client: fake,
      scheduler: clock.scheduler,
      timeoutSeconds: 6,
      deadMarginMs: 3_000,
      random: () => 0,
    });
    const health: [number, boolean][] = [];
    inf.healthy$.subscribe((healthy) => health.push([clock.now(), healthy]));
    inf.start();
    await clock.advance(0);
    expect(inf.hasSynced()).to.equal(true);
    await clock.advance(1_000);
    fake.lastWatch.event('ADDED', configMapAt('default', 'a', '2'));
    const lastDelivered = clock.now();
    // The partition: the open watch says nothing more, every new request hangs.
    for (let i = 0; i < 10; i++) {
      fake.watches.push('hang');
      fake.lists.push('hang');
    }
    await clock.advance(6_000 + 3_000 - 1);
    expect(fake.watchCalls, 'the silent watch is still trusted').to.have.length(1);
    await clock.advance(1);
    expect(fake.watchCalls, 'judged dead and resumed at once').to.have.length(2);
    expect(inf.isHealthy(), 'a dead connection replaced at once is no failure').to.equal(true);
    await clock.advance(3_000 - 1);
    expect(inf.isHealthy()).to.equal(true);
    await clock.advance(1);
    expect(inf.isHealthy()).to.equal(false);
    expect(health).to.deep.equal([
      [0, true],
      [lastDelivered + 6_000 + 2 * 3_000, false],
    ]);
    inf.stop();
  });
});
