import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { exportRun, pushToHub, type PushInput } from '../../src/export/index.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { startHubStandIn } from '../helpers/hub-stand-in.js';
import { buildStore, MIXED_ROLLOUTS, type RolloutShape } from './store-fixture.js';

const MANY: RolloutShape[] = Array.from({ length: 12 }, (_, index) => ({
  key: `item${index}`,
  toolCall: index % 3 === 0,
  padding: 30_000,
}));

/** Export the test store (built on first use) into `directory`/out. */
async function exported(directory: string, options: { shardSizeMb?: number; splitBy?: 'status' } = {}) {
  const storePath = join(directory, 'pushed.sqlite');
  if (!existsSync(storePath)) buildStore(directory, 'pushed', [...MIXED_ROLLOUTS, ...MANY]);
  return exportRun({ storePath, out: join(directory, 'out'), repository: 'traj-tests/pushed', ...options });
}

function pushInput(
  result: { directory: string; files: string[] },
  hub: { url: string; token: string },
  extra: Partial<PushInput> = {},
): PushInput {
  return {
    directory: result.directory,
    files: result.files,
    repository: 'traj-tests/pushed',
    token: hub.token,
    hubUrl: hub.url,
    revision: 'main',
    private: true,
    commitTitle: 'traj export',
    ...extra,
  };
}

test('a push creates the repository and lands every file in one commit; the same export again commits nothing', async (t) => {
  const directory = temporaryDirectory(t);
  const hub = await startHubStandIn();
  t.after(() => hub.close());
  const result = await exported(directory, { splitBy: 'status' });
  assert.deepEqual(result.files, [
    'data/done-00000-of-00001.parquet',
    'data/discarded-00000-of-00001.parquet',
    'data/failed-00000-of-00001.parquet',
    'README.md',
    'statistics.json',
  ]);

  const first = await pushToHub(pushInput(result, hub));
  assert.equal(first.created, true);
  assert.ok(first.commit, 'a commit was made');
  assert.deepEqual(first.uploaded, result.files);
  assert.equal(hub.repositories.get('traj-tests/pushed')?.private, true);
  assert.equal(hub.commits.length, 1);
  const commit = hub.commits[0]!;
  assert.equal(commit.oid, first.commit.oid);
  assert.equal(commit.summary, 'traj export');
  assert.deepEqual(
    commit.files,
    result.files.map((path) => ({ path, lfs: path.endsWith('.parquet') })),
  );
  assert.deepEqual(commit.deleted, []);
  assert.equal(hub.lfsUploads.length, 3);
  for (const path of result.files)
    assert.ok(
      hub.file('traj-tests/pushed', path)!.content.equals(readFileSync(join(result.directory, path))),
      `${path} arrived intact`,
    );
  const card = hub.file('traj-tests/pushed', 'README.md')!.content.toString();
  assert.match(card, /- split: discarded\n\s+path: data\/discarded-\*/);
  assert.match(card, /load_dataset\("traj-tests\/pushed", split="done"\)/);
  assert.equal(hub.unauthorized, 0);

  // Export again (same store, same options) and push: digests match, so nothing is sent or committed.
  const again = await exported(directory, { splitBy: 'status' });
  const requestsBefore = hub.requests.length;
  const second = await pushToHub(pushInput(again, hub));
  assert.equal(second.created, false);
  assert.equal(second.commit, null);
  assert.deepEqual(second.unchanged, result.files);
  assert.deepEqual(second.uploaded, []);
  assert.equal(hub.commits.length, 1, 'no new revision');
  assert.equal(hub.lfsUploads.length, 3);
  const calls = hub.requests.slice(requestsBefore).map((request) => `${request.method} ${request.path}`);
  assert.deepEqual(calls, ['GET /api/datasets/traj-tests/pushed', 'GET /api/datasets/traj-tests/pushed/tree/main']);
});

test('a changed export: new shards uploaded, stale shards deleted in the same commit, other files left alone', async (t) => {
  const directory = temporaryDirectory(t);
  const hub = await startHubStandIn();
  t.after(() => hub.close());
  const coarse = await exported(directory);
  await pushToHub(pushInput(coarse, hub));
  hub.repositories
    .get('traj-tests/pushed')!
    .branches.get('main')!
    .set('NOTES.md', { content: Buffer.from('a person wrote this'), oid: 'f'.repeat(40) });

  const fine = await exported(directory, { shardSizeMb: 0.1 });
  const shards = fine.files.filter((path) => path.startsWith('data/'));
  assert.ok(shards.length >= 3, shards.join(', '));
  const pushed = await pushToHub(pushInput(fine, hub));
  assert.ok(pushed.commit);
  assert.equal(hub.commits.length, 2);
  const commit = hub.commits[1]!;
  assert.deepEqual(commit.deleted, ['data/train-00000-of-00001.parquet']);
  assert.deepEqual(commit.files.map((file) => file.path).sort(), [...shards, 'README.md'].sort());
  const remote = [...hub.repositories.get('traj-tests/pushed')!.branches.get('main')!.keys()].sort();
  assert.deepEqual(remote, ['.gitattributes', 'NOTES.md', 'README.md', 'statistics.json', ...shards].sort());
});

test('--revision commits to a branch, created from main when missing', async (t) => {
  const directory = temporaryDirectory(t);
  const hub = await startHubStandIn();
  t.after(() => hub.close());
  const result = await exported(directory);
  const pushed = await pushToHub(pushInput(result, hub, { revision: 'v2', private: false }));
  assert.equal(pushed.revision, 'v2');
  assert.equal(hub.repositories.get('traj-tests/pushed')?.private, false);
  assert.equal(hub.commits[0]!.branch, 'v2');
  assert.ok(hub.file('traj-tests/pushed', 'README.md', 'v2'));
  assert.equal(hub.file('traj-tests/pushed', 'README.md', 'main'), undefined, 'main is untouched');
});

test('Hub failures are typed errors naming the step, and the token never appears in them', async (t) => {
  const directory = temporaryDirectory(t);
  const hub = await startHubStandIn();
  t.after(() => hub.close());
  const result = await exported(directory);
  const wrongToken = 'hf_wrongwrongwrongwrong';
  await assert.rejects(pushToHub(pushInput(result, hub, { token: wrongToken })), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'hub_unauthorized');
    assert.match(
      error.message,
      /traj-tests\/pushed@main failed while creating the repository: HTTP 401: Invalid credentials.*\(check that the token is valid and may write to traj-tests\)/,
    );
    assert.ok(!error.message.includes(wrongToken));
    return true;
  });
  await assert.rejects(
    pushToHub(pushInput(result, hub, { token: 'not-a-hub-token' })),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, 'invalid_token');
      assert.ok(!error.message.includes('not-a-hub-token'));
      return true;
    },
  );
  await assert.rejects(pushToHub(pushInput(result, hub, { repository: 'no-slash' })), /expected ORG\/NAME/);

  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  await assert.rejects(
    pushToHub(pushInput(result, hub, { hubUrl: `http://127.0.0.1:${port}` })),
    (error: Error & { code?: string; retryable?: boolean }) => {
      assert.equal(error.code, 'hub_unreachable');
      assert.equal(error.retryable, true);
      assert.match(error.message, /is http:\/\/127\.0\.0\.1:\d+ reachable\?/);
      return true;
    },
  );
  assert.equal(hub.commits.length, 0);
});
