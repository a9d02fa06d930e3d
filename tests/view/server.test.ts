import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, it } from 'node:test';
import { writeSyntheticRun } from '../../benchmarks/harness/synthetic-run.js';
import { SessionStore } from '../../src/chat/session-store.js';
import { startViewer } from '../../src/view/index.js';
import { temporaryDirectory } from '../helpers/cli.js';

export const INJECTION =
  'Done. <script>document.title = "pwned"</script><img src=x onerror="document.title = \'pwned\'"> & "quoted"';

/** A run store whose item-000003 answer is markup, as a hostile or confused model might write. */
export function writeHostileRun(path: string): void {
  writeSyntheticRun(path, 60, { name: 'hostile' });
  // Written behind the store's back, as a tampering process would.
  const store = new Database(path);
  const row = store.prepare("SELECT record FROM items WHERE key = 'item-000003'").pluck().get() as string;
  const record = JSON.parse(row) as { messages: { content: string | null; reasoning?: string }[] };
  record.messages[4]!.content = INJECTION;
  record.messages[2]!.reasoning = `thinking about ${INJECTION}`;
  store.prepare("UPDATE items SET record = ? WHERE key = 'item-000003'").run(JSON.stringify(record));
  store.close();
}

function send(
  url: string,
  options: { method?: string; path?: string; host?: string } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const target = new URL(options.path ?? '/', url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      target,
      { method: options.method ?? 'GET', headers: options.host ? { host: options.host } : {} },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the viewer server', () => {
  it('serves runs, trajectories and sessions read-only, escaped, with a strict CSP; refuses writes and foreign Host names', async (t) => {
    const directory = temporaryDirectory(t);
    const checkpoints = join(directory, 'checkpoints');
    writeHostileRun(join(checkpoints, 'hostile.sqlite'));
    writeSyntheticRun(join(checkpoints, 'other.sqlite'), 30, { name: 'other', rewardShift: 0.5 });
    new Database(join(checkpoints, 'not-a-run.sqlite')).exec('CREATE TABLE things (x)');
    const sessionsPath = join(directory, 'home', 'sessions.sqlite');
    const sessions = SessionStore.open(sessionsPath);
    sessions.create({
      id: '20260101-000000-abcdef',
      title: null,
      model: 'm',
      base_url: 'http://127.0.0.1:1/v1',
      toolsets: ['terminal'],
      tools: [],
      sandbox: 'local',
      forked_from: null,
      usage: {
        prompt_tokens: 0,
        completion_tokens: 0,
        reasoning_tokens: 0,
        cached_tokens: 0,
        cost: null,
        api_calls: 0,
      },
    });
    sessions.replaceMessages('20260101-000000-abcdef', [
      { role: 'user', content: 'What is in <b>here</b>?' },
      { role: 'assistant', content: 'A bold tag, shown as text.' },
    ]);
    sessions.close();
    const viewer = await startViewer({
      stores: [],
      checkpointsDir: checkpoints,
      sessionsPath,
      host: '127.0.0.1',
      port: 0,
    });
    t.after(() => viewer.close());
    assert.match(viewer.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);

    const home = await send(viewer.url);
    assert.equal(home.status, 200);
    assert.match(String(home.headers['content-security-policy']), /default-src 'none'; style-src 'self'/);
    assert.doesNotMatch(
      String(home.headers['content-security-policy']),
      /script-src/,
      'no script source is allowed at all',
    );
    assert.match(home.body, /data-run="hostile"/);
    assert.match(home.body, /data-run="other"/);
    assert.match(
      home.body,
      /<tr data-run="not-a-run" class="broken">.*not-a-run\.sqlite is not a traj run store/s,
      'a foreign file is listed with why, not a crash',
    );
    assert.match(home.body, /data-session="20260101-000000-abcdef"/);
    assert.match(home.body, /What is in &lt;b&gt;here&lt;\/b&gt;\?/);
    assert.doesNotMatch(home.body, /<script/i);

    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const refused = await send(viewer.url, { method, path: '/runs/hostile' });
      assert.equal(refused.status, 405, method);
      assert.equal(refused.headers.allow, 'GET, HEAD');
    }
    const rebinding = await send(viewer.url, { host: 'attacker.example:80' });
    assert.equal(rebinding.status, 403, 'a loopback viewer answers only to loopback host names');
    assert.equal((await send(viewer.url, { host: `localhost:${viewer.port}` })).status, 200);

    const item = await send(viewer.url, { path: '/runs/hostile/item?key=item-000003&sample=0' });
    assert.equal(item.status, 200);
    assert.ok(!item.body.includes('<script>document'), "the model's script is not markup");
    assert.ok(!item.body.includes('<img src=x'), "the model's image is not markup");
    assert.ok(
      item.body.includes(
        'Done. &lt;script&gt;document.title = &quot;pwned&quot;&lt;/script&gt;&lt;img src=x onerror=&quot;document.title = &#39;pwned&#39;&quot;&gt; &amp; &quot;quoted&quot;',
      ),
    );
    assert.match(item.body, /traj chat --fork hostile item-000003|traj chat --fork \/[^ ]*hostile\.sqlite item-000003/);

    const filtered = await send(viewer.url, { path: '/runs/hostile?status=done&q=pwned' });
    assert.equal(filtered.status, 200);
    assert.deepEqual(
      [...filtered.body.matchAll(/<tr data-key="([^"]+)"/g)].map((match) => match[1]),
      ['item-000003'],
    );
    const bad = await send(viewer.url, { path: '/runs/hostile?min=abc&sort=nonsense' });
    assert.equal(bad.status, 200);
    assert.match(bad.body, /min: &#39;abc&#39; is not a number/);

    const session = await send(viewer.url, { path: '/sessions/20260101-000000-abcdef' });
    assert.match(session.body, /traj chat --resume 20260101-000000-abcdef/);
    assert.match(session.body, /A bold tag, shown as text\./);

    const compare = await send(viewer.url, { path: '/compare?a=hostile&b=other' });
    assert.equal(compare.status, 200);
    assert.match(compare.body, /data-metric="pass_rate_difference"/);
    const head = await send(viewer.url, { method: 'HEAD', path: '/runs/hostile/plots' });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');

    assert.equal((await send(viewer.url, { path: '/runs/nothing' })).status, 404);
    assert.equal((await send(viewer.url, { path: '/runs/hostile/item?key=nope&sample=0' })).status, 404);
    assert.equal((await send(viewer.url, { path: '/runs/hostile/item' })).status, 400);
    assert.equal((await send(viewer.url, { path: '/sessions/nope' })).status, 404);
    assert.equal((await send(viewer.url, { path: '/runs/%E0%A4%A' })).status, 400);
  });
});
