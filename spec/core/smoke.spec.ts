import { expect } from 'chai';
import { firstValueFrom, of } from 'rxjs';

describe('toolchain', () => {
  it('runs TypeScript specs with rxjs', async () => {
    expect(await firstValueFrom(of(42))).to.equal(42);
  });
});
