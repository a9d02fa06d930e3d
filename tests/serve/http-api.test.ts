import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServeApi } from '../../src/serve/http-api.js';
import { Serving } from '../../src/serve/serving.js';

const POLICY = { base_url: 'http://127.0.0.1:8000/v1', model: 'policy', version: 3 };

async function call(url: string, method: string, body: string): Promise<{ status: number; body: { error?: string } }> {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, body: (await response.json()) as { error?: string } };
}

test('the serve API refuses bad bodies naming the field, and a policy version that goes back', async (t) => {
  const stop = new AbortController();
  const serving = new Serving({ policy: POLICY, samples: 2, maxAhead: 1, maxStaleness: 1, stop: stop.signal });
  const api = await startServeApi(serving, { host: '127.0.0.1', port: 0 });
  t.after(async () => {
    stop.abort();
    await api.close();
  });
  const missing = await call(`${api.url}/v1/groups`, 'POST', JSON.stringify({ count: 2 }));
  assert.equal(missing.status, 400);
  assert.match(missing.body.error!, /request_id: /);
  const unknown = await call(`${api.url}/v1/groups`, 'POST', JSON.stringify({ request_id: 'a', count: 1, cuont: 2 }));
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error!, /cuont/);
  const notJson = await call(`${api.url}/v1/policy`, 'PUT', '{');
  assert.equal(notJson.status, 400);
  assert.match(notJson.body.error!, /not JSON/);

  const older = await call(`${api.url}/v1/policy`, 'PUT', JSON.stringify({ ...POLICY, version: 2 }));
  assert.equal(older.status, 409);
  assert.match(older.body.error!, /version 2 is older than the current version 3/);
  const moved = await call(
    `${api.url}/v1/policy`,
    'PUT',
    JSON.stringify({ ...POLICY, base_url: 'http://127.0.0.1:8001/v1', version: 4 }),
  );
  assert.equal(moved.status, 200);
  assert.deepEqual(serving.policy.current, { ...POLICY, base_url: 'http://127.0.0.1:8001/v1', version: 4 });
  const current = await (await fetch(`${api.url}/v1/policy`)).json();
  assert.deepEqual(current, { policy: { ...POLICY, base_url: 'http://127.0.0.1:8001/v1', version: 4 } });
});
