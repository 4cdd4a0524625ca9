// The repository's copy of the known-answer vectors must equal the shared specification's file.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const local = new URL('../../../test-vectors/signatures.json', import.meta.url);
const shared = new URL('../../../../shared/vectors/signatures.json', import.meta.url);

describe('test vectors', () => {
  it('the repository copy is present and parses', () => {
    const v = JSON.parse(readFileSync(local, 'utf8'));
    expect(v.query_hmac.length).toBeGreaterThan(0);
    expect(v.webhook_body_hmac.length).toBeGreaterThan(0);
    expect(v.webhook_standard_signature.length).toBeGreaterThan(0);
  });
  it.skipIf(!existsSync(shared))('equals ../shared/vectors/signatures.json', () => {
    expect(JSON.parse(readFileSync(local, 'utf8'))).toEqual(JSON.parse(readFileSync(shared, 'utf8')));
  });
});
