/** docs/workflows.md shows what the code does: its diagram is `toMermaid()` of its example. */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { webPageWorkflow } from '../../docs/examples/workflow.js';

describe('docs/workflows.md', () => {
  it('the mermaid diagram is the verbatim toMermaid() output of docs/examples/workflow.ts', () => {
    const page = readFileSync(new URL('../../docs/workflows.md', import.meta.url), 'utf8');
    const diagram = /```mermaid\n([\s\S]*?)```/.exec(page)?.[1];
    expect(diagram).to.equal(webPageWorkflow.build().toMermaid());
  });
});
