import { expect } from 'chai';
import { ConfigurationError } from '../../../lib/index.js';
import { explore, formatFailure, replay, type ExploreResult } from '../../../lib/testing/explore/index.js';
import { subjects } from './subjects.js';

/** What each subject took, printed once at the end (the figures of docs/testing.md). */
const figures: string[] = [];

/** The twin's seeds: CI's 10; `RXKUBE_TWIN_RUNS=120` (or `npm run bench:explore`) for the default budget's figure. */
const twinRuns = Number(process.env['RXKUBE_TWIN_RUNS'] ?? 10);

describe('testing: explore finds the bugs Sieve and Acto found, in small operators with a fixed twin', function () {
  this.timeout(180_000);

  after(() => {
    if (figures.length > 0) console.log(`      explore figures:\n${figures.map((f) => `        ${f}`).join('\n')}`);
  });

  for (const subject of subjects) {
    it(`finds ${subject.name} (${subject.sieveClass}) within the default budget, shrunk and replayable`, async () => {
      const result: ExploreResult = await explore(subject.options('buggy'));
      expect(result.failure, `no failure found; coverage ${JSON.stringify(result.coverage)}`).to.not.equal(undefined);
      const failure = result.failure!;
      figures.push(
        `${subject.name}: ${failure.oracle} after ${failure.foundAfterRuns} seeds, ${(failure.foundAfterMs / 1000).toFixed(1)} s; shrunk to ${failure.trace.actions.length} steps + [${failure.trace.perturbations.map((p) => p.type).join(', ')}] (${failure.shrinkRuns} runs)`,
      );
      // The shrunk trace fails on its own: it is the regression test.
      const again = await replay(subject.options('buggy'), failure.trace);
      expect(again.failed, formatFailure(failure)).to.equal(true);
      expect(again.oracle).to.equal(failure.oracle);
    });

    it(`shows no failure in the fixed twin of ${subject.name} over ${twinRuns} seeds`, async () => {
      const result = await explore({ ...subject.options('fixed'), budget: { runs: twinRuns } });
      expect(result.failure && formatFailure(result.failure)).to.equal(undefined);
    });
  }

  it('replay(seed) reproduces a found failure identically 10 times in a row (a crash, a stale view, a coalesced watch)', async () => {
    for (const name of ['generated-name', 'stale-scale-down', 'scale-down']) {
      const subject = subjects.find((s) => s.name === name)!;
      const { failure } = await explore(subject.options('buggy'));
      expect(failure).to.not.equal(undefined);
      const first = await replay(subject.options('buggy'), failure!.seed);
      expect(first.failed, name).to.equal(true);
      for (let i = 0; i < 10; i++) {
        const verdict = await replay(subject.options('buggy'), failure!.seed);
        expect({ oracle: verdict.oracle, message: verdict.message, log: verdict.log }, `${name}, replay ${i + 1}`).to.deep.equal({
          oracle: first.oracle,
          message: first.message,
          log: first.log,
        });
      }
    }
  });

  it('rejects options it cannot explore with, naming the option', async () => {
    const base = subjects[0].options('fixed');
    await explore({ ...base, observe: [] }).then(
      () => expect.fail('accepted'),
      (err: unknown) => expect(err).to.be.instanceOf(ConfigurationError).and.to.have.property('option', 'observe'),
    );
    await explore({ ...base, budget: { runs: -1 } }).then(
      () => expect.fail('accepted'),
      (err: unknown) => expect(err).to.be.instanceOf(ConfigurationError).and.to.have.property('option', 'budget.runs'),
    );
  });
});
