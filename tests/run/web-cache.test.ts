import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { RunStore } from '../../src/run/store.js';
import { rolloutWebCache } from '../../src/run/web-cache.js';
import { temporaryDirectory } from '../helpers/cli.js';

test('the web cache: workers read the store, new entries travel in the outcome, modes read and off', async (t) => {
  const directory = temporaryDirectory(t);
  const path = join(directory, 'run.sqlite');
  const store = RunStore.open(path);
  t.after(() => store.close());
  store.saveResult({
    key: 'k',
    sample: 0,
    status: 'failed',
    record: null,
    webCache: [{ key: 'url:https://a.example/', value: { content: 'stored page' } }],
    webCounts: { fetches: 1, hits: 0 },
  });
  store.flush();

  const first = rolloutWebCache({ path, mode: 'readwrite' });
  assert.deepEqual(first.get('url:https://a.example/'), { content: 'stored page' }, 'read from the store');
  first.put('url:https://b.example/', { content: 'fresh page' });
  assert.deepEqual(first.fresh, [{ key: 'url:https://b.example/', value: { content: 'fresh page' } }]);
  const second = rolloutWebCache({ path, mode: 'readwrite' });
  assert.deepEqual(
    second.get('url:https://b.example/'),
    { content: 'fresh page' },
    'shared with the next rollout of this thread',
  );
  assert.deepEqual(second.fresh, []);

  const reading = rolloutWebCache({ path, mode: 'read' });
  assert.deepEqual(reading.get('url:https://a.example/'), { content: 'stored page' });
  assert.equal(reading.get('url:https://b.example/'), undefined, 'read mode sees the store only');
  reading.put('url:https://c.example/', 'x');
  assert.deepEqual(reading.fresh, [], 'read mode adds nothing');

  const off = rolloutWebCache({ path, mode: 'off' });
  assert.equal(off.get('url:https://a.example/'), undefined);
  off.put('url:https://d.example/', 'x');
  assert.deepEqual(off.fresh, []);
  assert.deepEqual(store.counters()['web:fetches'], 1);
});
