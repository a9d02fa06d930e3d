import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { reply, startScriptedServer, TINY_PNG_BASE64, type ChatRequest } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { readParquet } from '../export/duckdb.js';

test('dataset rows with image parts reach the model unchanged; the views and the export keep them', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer((request: ChatRequest) =>
    reply(`saw ${(request.messages[1]!.content as unknown[]).length} parts`),
  );
  t.after(() => server.close());
  const dataUrl = `data:image/png;base64,${TINY_PNG_BASE64}`;
  const parts = [
    { type: 'text', text: 'Compare these two pictures.' },
    { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
    { type: 'image_url', image_url: { url: dataUrl, detail: 'low' } },
  ];
  const dataset = join(directory, 'images.jsonl');
  writeFileSync(
    dataset,
    `${JSON.stringify({ messages: [{ role: 'user', content: parts }] })}\n${JSON.stringify({ prompt: 'no image here' })}\n`,
  );
  const result = await runCli(
    [
      'batch',
      '--dataset',
      dataset,
      '--run',
      'pics',
      '--base-url',
      server.url,
      '--model',
      'agent',
      '--api-key-env',
      'NO_KEY',
      '--toolsets',
      'terminal',
    ],
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);

  const sent = server.requests.find((request) => Array.isArray(request.messages[1]!.content))!;
  assert.deepEqual(sent.messages[1]!.content, parts, 'the model received the parts exactly as the dataset gave them');

  const records = readFileSync(join(directory, 'datasets', 'pics', 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  const withImages = records.find((record) => record.images.length > 0)!;
  assert.deepEqual(withImages.messages[1]!.content, parts, 'the messages view keeps the parts');
  assert.equal(
    withImages.conversations[1]!.value,
    'Compare these two pictures.\n<image>\n<image>',
    'the ShareGPT view marks each image',
  );
  assert.deepEqual(withImages.images, ['https://example.com/a.png', dataUrl]);
  const plain = records.find((record) => record.images.length === 0)!;
  assert.equal(plain.messages[1]!.content, 'no image here');

  const exported = await runCli(['export', 'pics', '--out', join(directory, 'export')], { cwd: directory });
  assert.equal(exported.code, 0, exported.stderr);
  const files = readdirSync(join(directory, 'export', 'data'))
    .filter((name) => name.endsWith('.parquet'))
    .map((name) => join(directory, 'export', 'data', name));
  const parquet = await readParquet(files);
  assert.deepEqual(
    parquet.columns.find((column) => column.name === 'images'),
    { name: 'images', type: 'VARCHAR[]' },
  );
  const rows = parquet.rows.map((row) => row.images);
  assert.deepEqual(
    rows.sort((a, b) => (a as string[]).length - (b as string[]).length),
    [[], ['https://example.com/a.png', dataUrl]],
  );
});
