import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseQueueUrl } from '../../src/queue/connection.js';
import { describeAnnouncement, jobIdFor, refusalReasons } from '../../src/queue/run-channel.js';
import { queuedRunSettings } from '../helpers/queue.js';

const settings = queuedRunSettings('r');

test('a queue URL is redis://HOST:PORT[/DB]; anything else names the flag and the form expected', () => {
  assert.deepEqual(parseQueueUrl('redis://10.0.0.5:6380/2'), {
    url: 'redis://10.0.0.5:6380/2',
    host: '10.0.0.5',
    port: 6380,
    db: 2,
    tls: false,
  });
  assert.equal(parseQueueUrl('redis://h').port, 6379);
  assert.throws(() => parseQueueUrl('http://h:1'), /--queue http:\/\/h:1: expected redis:\/\/HOST:PORT\[\/DB\]/);
  assert.throws(() => parseQueueUrl('redis://h:1/x'), /the database after the port must be a number, got 'x'/);
  assert.throws(() => parseQueueUrl('nonsense'), /not a URL/);
});

test('job ids: one per prompt key, sample and recorded failures; never a ":" (BullMQ refuses it)', () => {
  const ids = [
    jobIdFor('id:with:colons', 0, 0),
    jobIdFor('id:with:colons', 1, 0),
    jobIdFor('id:with:colons', 0, 1),
    jobIdFor('abc#1', 0, 0),
  ];
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.ok(!id.includes(':'), id);
  assert.equal(
    jobIdFor('k', 0, 0),
    jobIdFor('k', 0, 0),
    'the same try is the same job: a re-attaching coordinator finds it',
  );
});

test('a worker refuses a run whose code version, tool schemas, environment module or sandbox differ, and says which', async () => {
  const own = await describeAnnouncement({ run: 'r', fingerprint: 'f', settings, stalledMs: 1000, maxStalls: 3 });
  assert.deepEqual(await refusalReasons(own, {}), []);
  assert.deepEqual(await refusalReasons(own, { sandbox: 'local' }), []);
  assert.match(
    (await refusalReasons({ ...own, codeVersion: '0.0.1+deadbeef' }, {}))[0]!,
    /^code version differs: the run's is 0\.0\.1\+deadbeef, this worker's is /,
  );
  assert.match(
    (await refusalReasons({ ...own, toolsFingerprint: 'other' }, {}))[0]!,
    /^fingerprint differs \(tool schemas\)/,
  );
  const elsewhere = { ...own, settings: { ...settings, environmentModule: '/nowhere/env.js' }, environmentHash: 'abc' };
  assert.match((await refusalReasons(elsewhere, {}))[0]!, /\/nowhere\/env\.js does not exist on this worker/);
  assert.match(
    (await refusalReasons(own, { sandbox: 'docker' }))[0]!,
    /sandbox differs: the run uses local, this worker was started with --sandbox docker/,
  );
});
