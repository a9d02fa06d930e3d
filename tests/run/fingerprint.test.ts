import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointSchema } from '../../src/config/endpoint.js';
import { diffFingerprint } from '../../src/run/store.js';
import { fingerprintParts, type FingerprintInput } from '../../src/run/run-fingerprint.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';

const BASE_REGISTRY = await loadToolRegistry();

function parts(endpoint: Record<string, unknown>): Record<string, unknown> {
  const base = baseInput();
  return fingerprintParts({ ...base, endpoint: EndpointSchema.parse({ ...base.endpoint, ...endpoint }) });
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

test('vision on the main endpoint takes its stable identity: the scripted endpoint on a new port is the same run', async () => {
  const registry = await loadToolRegistry();
  const scripted = (port: number) => {
    const endpoint = EndpointSchema.parse({ base_url: `http://127.0.0.1:${port}/v1`, model: 'm' });
    return fingerprintParts({
      endpoint,
      endpointIdentity: 'traj-scripted',
      choice: { toolsets: ['terminal', 'vision'] },
      registry,
      maxTurns: 5,
      systemPrompt: undefined,
      seed: 0,
      environment: { name: 'batch', version: '1' },
      agent: 'model',
      sandbox: { kind: 'local' },
      tools: { auxiliary: { vision: endpoint } },
    });
  };
  assert.deepEqual(scripted(40001), scripted(40002));
  assert.match(JSON.stringify(scripted(40001).auxiliary), /"base_url":"traj-scripted"/);
});

test('run-time prompt material is in the fingerprint only when set', () => {
  assert.deepEqual(parts({}), fingerprintParts({ ...baseInput(), runTime: {} }));
  const withEphemeral = fingerprintParts({ ...baseInput(), runTime: { ephemeralSystemPrompt: 'be terse' } });
  assert.equal(withEphemeral.ephemeral_system_prompt, 'be terse');
  const withPrefill = fingerprintParts({ ...baseInput(), runTime: { prefill: [{ role: 'user', content: 'hi' }] } });
  assert.match(String(withPrefill.prefill), /^[0-9a-f]{16}$/);
});

function baseInput(): FingerprintInput {
  return {
    endpoint: EndpointSchema.parse({ base_url: 'http://127.0.0.1:1/v1', model: 'm' }),
    endpointIdentity: 'http://127.0.0.1:1/v1',
    choice: { toolsets: ['terminal'] },
    registry: BASE_REGISTRY,
    maxTurns: 5,
    systemPrompt: undefined,
    seed: 0,
    environment: { name: 'batch', version: '1' },
    agent: 'model',
    sandbox: { kind: 'local' },
  };
}

test('tokenizer: is in the fingerprint only when set, so stores written before it resume unchanged', () => {
  const without = fingerprintParts(baseInput());
  assert.equal('tokenizer' in without, false);
  assert.deepEqual(fingerprintParts({ ...baseInput(), tokenizer: undefined }), without);
  const withTokenizer = fingerprintParts({ ...baseInput(), tokenizer: 'Qwen/Qwen3-8B' });
  assert.equal(withTokenizer.tokenizer, 'Qwen/Qwen3-8B');
  const changes = diffFingerprint(withTokenizer, fingerprintParts({ ...baseInput(), tokenizer: 'Qwen/Qwen3-4B' }));
  assert.deepEqual(changes.length, 1);
  assert.match(changes[0]!, /^tokenizer: /);
});
