#!/usr/bin/env node
// The `storegate` command. The platform is TypeScript run through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
