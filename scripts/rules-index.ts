/** Rewrites the rules index at the end of docs/architecture.md from the tree (npm run rules:index). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PAGE, renderIndex, ruleFacts, withIndex } from '../spec/architecture/rules.js';

const root = new URL('..', import.meta.url).pathname;
const path = join(root, PAGE);
writeFileSync(path, withIndex(readFileSync(path, 'utf8'), renderIndex(ruleFacts(root))));
console.log(`${PAGE}: rules index rewritten`);
