import { expect } from 'chai';
import { lineSplitter, LineTooLongError } from '../../lib/kube/line-splitter.js';

describe('kube/line-splitter: watch lines in linear time (issue 32)', () => {
  it('scans each byte once: a 16 MB line fed in 64 KB chunks costs at most ~2x its length in bytes scanned, not a rescan per chunk', () => {
    const lineBytes = 16 * 1024 * 1024;
    const chunk = 64 * 1024;
    const lines: string[] = [];
    const splitter = lineSplitter((line) => lines.push(line));
    const body = Buffer.alloc(lineBytes, 'a');
    for (let at = 0; at < body.length; at += chunk) splitter.push(body.subarray(at, at + chunk));
    splitter.push(Buffer.from('\n'));
    expect(lines).to.have.length(1);
    expect(lines[0].length).to.equal(lineBytes);
    expect(splitter.scannedBytes).to.be.at.most(2 * lineBytes);
  });

  it('splits lines across and within chunks, keeps multi-byte characters cut between chunks whole, skips nothing', () => {
    const lines: string[] = [];
    const splitter = lineSplitter((line) => lines.push(line));
    const text = Buffer.from('{"a":"é中"}\n\n{"b":2}\n{"c":"😀"}\n{"d"');
    for (let at = 0; at < text.length; at += 3) splitter.push(text.subarray(at, at + 3));
    expect(lines).to.deep.equal(['{"a":"é中"}', '', '{"b":2}', '{"c":"😀"}']);
    expect(splitter.scannedBytes).to.equal(text.length);
  });

  it('a line past the limit is a LineTooLongError, whether it ends in the chunk or not', () => {
    const open = lineSplitter(() => undefined, 10);
    expect(() => open.push(Buffer.from('x'.repeat(11)))).to.throw(LineTooLongError, /a line of more than 10 bytes \(11 so far/);
    const ended = lineSplitter(() => undefined, 10);
    ended.push(Buffer.from('x'.repeat(6)));
    expect(() => ended.push(Buffer.from(`${'x'.repeat(6)}\n`))).to.throw(LineTooLongError);
    const fits = lineSplitter(() => undefined, 10);
    expect(() => fits.push(Buffer.from(`${'x'.repeat(10)}\n`))).not.to.throw();
  });
});
