import { expect } from 'chai';
import { exportedNames, forgottenExportProblems } from '../../api/forgotten.js';

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
});
