import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { StartPacer } from '../../src/run/start-pacer.js';
import { reply, startScriptedServer } from '../../src/testing/index.js';
import { prompts, readRecords, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

let server: Server;
let port: number;

before(async () => {
  server = createServer((socket) => socket.destroy());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

after(() => server.close());

/**
 * Six "rollouts" arrive in one turn of the event loop, as a first wave does; each opens a real
 * connection as soon as it begins. Returns what happened, in order.
 */
async function burst(pacer: StartPacer): Promise<string[]> {
  const events: string[] = [];
  const rollouts = Array.from({ length: 6 }, async (_, index) => {
    await pacer.slot();
    events.push(`begin ${index}`);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    events.push(`connect ${index}`);
    socket.destroy();
  });
  await Promise.all(rollouts);
  return events;
}

test('a burst begins a few per turn, first come first served, and the first sockets connect before the last rollouts begin', async () => {
  const events = await burst(new StartPacer(2));
  const begins = events.filter((event) => event.startsWith('begin'));
  assert.deepEqual(begins, ['begin 0', 'begin 1', 'begin 2', 'begin 3', 'begin 4', 'begin 5']);
  assert.ok(
    events.indexOf('connect 0') < events.indexOf('begin 5'),
    `the first connection waited for the whole burst: ${events.join(', ')}`,
  );
  // Two per turn: the third begins only after the loop turned.
  assert.deepEqual(events.slice(0, 2), ['begin 0', 'begin 1']);
});

test('unpaced, the same burst holds every connection back until the last rollout has begun (why the pacer exists)', async () => {
  const events = await burst(new StartPacer(Number.POSITIVE_INFINITY));
  assert.ok(events.indexOf('begin 5') < events.indexOf('connect 0'), events.join(', '));
});

test('a rollout arriving alone begins at once, also right after a burst', async () => {
  const pacer = new StartPacer(2);
  await burst(pacer);
  const first = await Promise.race([
    pacer.slot().then(() => 'now'),
    new Promise((resolve) => setImmediate(resolve, 'a turn later')),
  ]);
  assert.equal(first, 'now');
});

// 192 rollouts: the first request must reach this process's server before the last of them begins.
// With 96 the margin (~40 ms) was once eaten by the server's own turn under the full suite's load.
const WAVE = 192;

test(`traj batch: a first wave of ${WAVE} rollouts on one thread sends its first requests before its last rollouts begin`, async (t) => {
  const directory = temporaryDirectory(t);
  const arrivals: number[] = [];
  // The script sees each request as it arrives, then answers after a model's latency.
  const server = await startScriptedServer(async () => {
    arrivals.push(Date.now());
    await sleep(300);
    return reply('done');
  });
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(WAVE));
  const result = await runCli(
    scriptedBatchArgs(dataset, 'paced', server.url, 'NO_KEY', [
      '--toolsets',
      'file',
      '--concurrency',
      String(WAVE),
      '--workers',
      '1',
    ]),
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  const starts = readRecords(directory, 'paced').map((record) => Date.parse(record.timing.started_at));
  assert.equal(starts.length, WAVE);
  const firstArrival = Math.min(...arrivals);
  const lastStart = Math.max(...starts);
  const firstStart = Math.min(...starts);
  assert.ok(
    firstArrival < lastStart,
    `the first request arrived ${firstArrival - lastStart} ms after the last rollout began (the wave took ${lastStart - firstStart} ms to begin): the wave was held back`,
  );
});
