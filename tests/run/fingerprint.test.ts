import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointSchema } from '../../src/config/endpoint.js';
import { diffFingerprint } from '../../src/run/store.js';
import { fingerprintParts, type FingerprintInput } from '../../src/run/batch.js';
import { createToolRegistry } from '../../src/tools/builtin.js';

function parts(endpoint: Record<string, unknown>): Record<string, unknown> {
  const input: FingerprintInput = {
    endpoint: EndpointSchema.parse({ base_url: 'http://127.0.0.1:1/v1', model: 'm', ...endpoint }),
    endpointIdentity: 'http://127.0.0.1:1/v1',
    choice: { toolsets: ['terminal'] },
    registry: createToolRegistry(),
    maxTurns: 5,
    systemPrompt: undefined,
    seed: 0,
    environment: { name: 'batch', version: '1' },
    agent: 'model',
    sandbox: { kind: 'local' },
  };
  return fingerprintParts(input);
}

test('the fingerprint names a changed sampling setting', () => {
  const changes = diffFingerprint(parts({ temperature: 0.2 }), parts({ temperature: 0.7 }));
  assert.equal(changes.length, 1);
  assert.match(changes[0]!, /^sampling: .*"temperature":0\.2.* → .*"temperature":0\.7/);
});

test('reasoning_echo other than the default changes the fingerprint; the default leaves older stores resumable', () => {
  assert.equal('reasoning_echo' in parts({}), false);
  assert.deepEqual(parts({ reasoning_echo: 'auto' }), parts({}));
  assert.equal(diffFingerprint(parts({}), parts({ reasoning_echo: 'never' })).length, 1);
});
