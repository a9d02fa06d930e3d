import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { nodeHttpFetch, wholeBodyOf } from '../../src/model/http-fetch.js';
import { readCappedText } from '../../src/model/reply-body.js';

/** A real HTTP server answering every request with `reply`; its URL. */
async function serve(t: TestContext, reply: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((_request, response) => reply(response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
}

/** `body` in pieces, chunked (no Content-Length), as many servers and proxies send JSON. */
function chunked(type: string, body: string, pieces = 4): (response: ServerResponse) => void {
  return (response) => {
    response.writeHead(200, { 'content-type': type });
    const size = Math.ceil(body.length / pieces);
    for (let start = 0; start < body.length; start += size) response.write(body.slice(start, start + size));
    response.end();
  };
}

test('a chunked JSON reply is read whole, and the reader takes those bytes as they are', async (t) => {
  const body = JSON.stringify({ choices: [{ message: { content: 'é中🙂 '.repeat(5000) } }] });
  const url = await serve(t, chunked('application/json', body));
  const response = await nodeHttpFetch(url, { method: 'POST', body: '{}' });
  assert.equal(response.headers.get('content-length'), null, 'sent chunked');
  assert.ok(wholeBodyOf(response), 'read whole');
  assert.equal(await readCappedText(response, 1024 * 1024), body);
  await assert.rejects(readCappedText(response, 1024), /1024/);
});

test('a chunked reply past the buffered size is passed on as a stream from where it got to', async (t) => {
  const body = 'x'.repeat(5 * 1024 * 1024);
  const url = await serve(t, chunked('application/json', body, 40));
  const response = await nodeHttpFetch(url, { method: 'POST', body: '{}' });
  assert.equal(wholeBodyOf(response), undefined);
  assert.equal(await readCappedText(response, 8 * 1024 * 1024), body);
});

test('an event stream is never buffered: its events reach the reader as they come', async (t) => {
  let finish: () => void = () => {};
  const url = await serve(t, (response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: first\n\n');
    finish = () => response.end('data: [DONE]\n\n');
  });
  const response = await nodeHttpFetch(url, { method: 'POST', body: '{}' });
  assert.equal(wholeBodyOf(response), undefined);
  const reader = response.body!.getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), 'data: first\n\n');
  finish();
  await reader.cancel();
});

test('a burst of replies keeps every connection for the next burst, past the 256 idle sockets an agent keeps by default', async (t) => {
  const server = createServer((_request, response) => response.end('{}'));
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  const burst = () =>
    Promise.all(Array.from({ length: 300 }, () => nodeHttpFetch(url, { method: 'POST', body: '{}' }))).then((replies) =>
      Promise.all(replies.map((reply) => reply.text())),
    );
  await burst();
  assert.equal(connections, 300);
  await burst();
  assert.equal(connections, 300, 'the second burst reconnected instead of reusing idle sockets');
});
