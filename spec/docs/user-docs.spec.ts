/**
 * What a user reads (README.md and docs/, but the architecture page, which states the behaviour
 * rules for contributors) speaks the user's language: no internal rule ids, no issue numbers,
 * and no command a standard kubectl does not bring.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';

const root = new URL('../../', import.meta.url).pathname;
const pages = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'architecture.md')
    .map((f) => join(root, 'docs', f)),
];

function findings(pattern: RegExp): string[] {
  return pages.flatMap((page) =>
    readFileSync(page, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${page.slice(root.length)}:${i + 1}: ${line.trim().slice(0, 120)}`] : [])),
  );
}

describe('the user documentation', () => {
  it('names no internal rule ids (EP7, OB1, SH1–SH5...) and no issue numbers', () => {
    expect(findings(/\b(EP|ES|OB|FZ|UP|WF|DR|SH)\d+\b/)).to.deep.equal([]);
    expect(findings(/\bissue #?\d+/i)).to.deep.equal([]);
  });

  it('needs no standalone kustomize: kubectl apply -k, not kustomize edit or kustomize build', () => {
    expect(findings(/\bkustomize (edit|build)\b/)).to.deep.equal([]);
  });
});
