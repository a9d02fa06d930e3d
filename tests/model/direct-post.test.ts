import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { ModelError } from '../../src/errors.js';
import { createModelClient } from '../../src/model/client.js';
import { buildRoot, projectRoot } from '../../src/util/paths.js';
import { FAST, HELLO } from './scripted-endpoint.js';

/**
 * The plain (not streamed) call's own HTTP exchange, against real servers that misbehave in ways
 * the scripted server cannot: a reply that stops half way, and a look at the request as sent.
 */
async function withRawServer<T>(
  handle: (request: IncomingMessage, response: ServerResponse, body: string) => void,
  run: (baseUrl: string, server: Server) => Promise<T>,
  host = '127.0.0.1',
): Promise<T> {
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => handle(request, response, body));
  });
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const bracketed = host.includes(':') ? `[${host}]` : host;
  try {
    return await run(`http://${bracketed}:${port}/v1`, server);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

const ANSWER = JSON.stringify({
  id: 'c',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }],
});

/** Headers and the first half of the answer, then nothing: the attempt waits on the body. */
function halfThenStall(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(ANSWER.length) });
  response.write(ANSWER.slice(0, 20));
}

test('a reply that stops half way is timed out by timeout_ms and retried', { timeout: 20_000 }, async () => {
  let calls = 0;
  const handle = (_request: IncomingMessage, response: ServerResponse) => {
    if (++calls === 1) return halfThenStall(response);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(ANSWER);
  };
  await withRawServer(handle, async (baseUrl) => {
    const failures: string[] = [];
    const client = createModelClient(
      { base_url: baseUrl, model: 'm', timeout_ms: 400, max_retries: 2 },
      { ...FAST, onRetry: (event) => failures.push(event.failure.message) },
    );
    const response = await client.complete({ messages: HELLO });
    assert.equal(response.message.content, 'whole');
    assert.equal(calls, 2);
    assert.match(failures[0]!, /no complete response within 400 ms/);
  });
});

test('an abort while the reply is half read ends the call at once, code aborted', { timeout: 20_000 }, async () => {
  const controller = new AbortController();
  let calls = 0;
  const handle = (_request: IncomingMessage, response: ServerResponse) => {
    calls++;
    halfThenStall(response);
    setTimeout(() => controller.abort(), 50);
  };
  await withRawServer(handle, async (baseUrl) => {
    const client = createModelClient({ base_url: baseUrl, model: 'm', timeout_ms: 60_000, max_retries: 2 }, FAST);
    const started = Date.now();
    await assert.rejects(client.complete({ messages: HELLO, signal: controller.signal }), (error: unknown) => {
      assert.ok(error instanceof ModelError);
      assert.equal(error.code, 'aborted');
      return true;
    });
    assert.equal(calls, 1, 'no second attempt after the abort');
    assert.ok(Date.now() - started < 10_000, 'ended by the abort, not by timeout_ms');
  });
});

test('the request goes out as an HTTP client would send it: Host, key, length, path and query', async () => {
  for (const host of ['127.0.0.1', '::1']) {
    const seen: Array<{ url: string; headers: IncomingMessage['headers']; raw: string[]; body: string }> = [];
    const handle = (request: IncomingMessage, response: ServerResponse, body: string) => {
      seen.push({ url: request.url!, headers: request.headers, raw: request.rawHeaders, body });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(ANSWER);
    };
    await withRawServer(
      handle,
      async (baseUrl, server) => {
        const client = createModelClient(
          { base_url: `${baseUrl}/?api-version=7`, model: 'm', api_key_env: 'DIRECT_POST_KEY' },
          { ...FAST, env: { DIRECT_POST_KEY: 'sk-test' } },
        );
        await client.complete({ messages: HELLO });
        await client.complete({ messages: HELLO });
        const { port } = server.address() as AddressInfo;
        assert.equal(seen.length, 2);
        for (const request of seen) {
          assert.equal(request.url, '/v1/chat/completions?api-version=7');
          assert.equal(request.headers.host, host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
          assert.equal(request.headers.authorization, 'Bearer sk-test');
          assert.equal(request.headers['content-type'], 'application/json');
          assert.equal(request.headers.connection, 'keep-alive');
          assert.equal(Number(request.headers['content-length']), Buffer.byteLength(request.body));
          assert.equal(JSON.parse(request.body).messages[0].content, 'hello');
          assert.equal(request.raw.filter((name, index) => index % 2 === 0 && /^host$/i.test(name)).length, 1);
        }
      },
      host,
    );
  }
});

test('a key with a line break is refused before anything is sent', async () => {
  let calls = 0;
  await withRawServer(
    () => calls++,
    async (baseUrl) => {
      const client = createModelClient(
        { base_url: baseUrl, model: 'm', api_key_env: 'DIRECT_POST_KEY', max_retries: 0 },
        { ...FAST, env: { DIRECT_POST_KEY: 'sk-test\r\nX-Injected: 1' } },
      );
      await assert.rejects(client.complete({ messages: HELLO }));
      assert.equal(calls, 0);
    },
  );
});

test('over HTTPS the certificate is checked for the endpoint host, which goes out as SNI', {
  timeout: 30_000,
}, async () => {
  const tls = join(projectRoot(), 'tests', 'fixtures', 'tls');
  const seen: Array<{ servername: string | false | null; host: string | undefined }> = [];
  const server = createTlsServer(
    { key: readFileSync(join(tls, 'localhost.key')), cert: readFileSync(join(tls, 'localhost.crt')) },
    (request, response) => {
      seen.push({ servername: (request.socket as TLSSocket).servername, host: request.headers.host });
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(ANSWER);
      });
    },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  // The agents are made at load, with the CAs of the process: a child trusts the test's own.
  const client = join(buildRoot(), 'src', 'model', 'client.js');
  const script = `
    const { createModelClient } = await import(${JSON.stringify(client)});
    const call = (host) => createModelClient({ base_url: 'https://' + host + ':${port}/v1', model: 'm', max_retries: 0 }, { env: {} })
      .complete({ messages: [{ role: 'user', content: 'hello' }] })
      .then((reply) => reply.message.content, (error) => 'refused: ' + error.message);
    console.log(JSON.stringify([await call('localhost'), await call('127.0.0.1')]));`;
  try {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: join(tls, 'localhost.crt') },
    });
    const [byName, byAddress] = JSON.parse(stdout) as string[];
    assert.equal(byName, 'whole');
    assert.equal(byAddress, 'whole', 'the certificate names 127.0.0.1 too');
    assert.deepEqual(seen[0], { servername: 'localhost', host: `localhost:${port}` });
    // An IP address is never sent as SNI (RFC 6066), as Node's own client does.
    assert.deepEqual(seen[1], { servername: false, host: `127.0.0.1:${port}` });

    const untrusted = await run(process.execPath, ['--input-type=module', '-e', script], { env: process.env });
    const refusals = JSON.parse(untrusted.stdout) as string[];
    for (const refusal of refusals)
      assert.match(refusal, /^refused: .*SELF_SIGNED_CERT/, 'without the CA the call is refused');
    assert.equal(seen.length, 2, 'no refused call reached the handler');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
