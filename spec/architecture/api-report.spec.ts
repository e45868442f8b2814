import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { exportedNames, forgottenExportProblems } from '../../api/forgotten.js';
import { namesExportedTwice, surfaceSize } from '../../api/homes.js';

// API Extractor writes a type that a public signature uses but the entry point does not export
// into the report as a warning; api:check turns each one into a failure users would otherwise hit
// as a type they cannot name.
describe('API report check', () => {
  const entry = { name: 'rxkube-pipeline', specifier: 'rxkube/pipeline', source: 'lib/pipeline.ts' };

  it('names the symbol and the entry point of each forgotten export in a report', () => {
    const report = [
      '// Warning: (ae-forgotten-export) The symbol "BackoffPolicy" needs to be exported by the entry point pipeline.d.ts',
      'export interface Options {',
      '    // Warning: (ae-forgotten-export) The symbol "RateLimiter" needs to be exported by the entry point pipeline.d.ts',
      '    readonly limiter: RateLimiter;',
      '    // Warning: (ae-forgotten-export) The symbol "RateLimiter" needs to be exported by the entry point pipeline.d.ts',
      '}',
    ].join('\n');
    const problems = forgottenExportProblems(entry, report);
    expect(problems).to.have.length(2);
    expect(problems[0]).to.include("'BackoffPolicy'").and.include("'rxkube/pipeline'").and.include('lib/pipeline.ts');
    expect(problems[1]).to.include("'RateLimiter'").and.include("'rxkube/pipeline'");
  });

  it('finds nothing in a report whose public types are all exported', () => {
    expect(forgottenExportProblems(entry, 'export interface Options {\n    readonly name: string;\n}\n')).to.deep.equal([]);
  });

  it("a type another entry point of the package exports is nameable from there (the test helpers lean on 'rxkube'); others are still named", () => {
    const warnings = [
      'The symbol "Operator" needs to be exported by the entry point index.d.ts',
      'The symbol "TraceStore" needs to be exported by the entry point index.d.ts',
    ].join('\n');
    const main = { specifier: 'rxkube', names: exportedNames('export class Operator {\n}\nexport interface Reconciler {\n}\n') };
    const problems = forgottenExportProblems(
      { name: 'rxkube-testing', specifier: 'rxkube/testing', source: 'lib/testing/index.ts' },
      warnings,
      main,
    );
    expect(problems).to.have.length(1);
    expect(problems[0]).to.include("'TraceStore'").and.include("or from 'rxkube'");
  });

  describe('one home per public name', () => {
    const names = (...list: string[]) => new Set(list);

    it('names a name that two entry points export, and both entry points', () => {
      const problems = namesExportedTwice(
        new Map([
          ['rxkube', names('Operator', 'KubeClient')],
          ['rxkube-kube', names('createKubeClient', 'KubeClient')],
          ['rxkube-testing', names('eventually')],
        ]),
      );
      expect(problems).to.deep.equal(["'KubeClient' is exported from rxkube and rxkube-kube: export it from one entry point only"]);
    });

    it('counts entries and distinct names', () => {
      const exported = new Map([
        ['rxkube', names('Operator', 'KubeClient')],
        ['rxkube-kube', names('KubeClient')],
      ]);
      expect(surfaceSize(exported)).to.deep.equal({ entries: 3, distinct: 2 });
    });

    it("the toolkit's committed reports export each name from one entry point", () => {
      const reports = readdirSync('api').filter((file) => file.endsWith('.api.md'));
      expect(reports).to.include('rxkube.api.md').and.include('rxkube-pipeline.api.md');
      const exported = new Map(reports.map((file) => [file, exportedNames(readFileSync(`api/${file}`, 'utf8'))]));
      expect(namesExportedTwice(exported)).to.deep.equal([]);
    });
  });
});
