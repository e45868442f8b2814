#!/usr/bin/env node
// rxkube ships TypeScript sources; tsx compiles them on load so `npx rxkube` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../lib/cli/main.ts');
