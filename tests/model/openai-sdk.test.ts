import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { APIError, OpenAI, sdkSource, vendoredSdk } from '../../src/model/openai-sdk.js';
import { buildRoot } from '../../src/util/paths.js';
import { temporaryDirectory } from '../helpers/cli.js';

const installed = (
  JSON.parse(readFileSync(join(dirname(createRequire(import.meta.url).resolve('openai')), 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

function vendorFolder(directory: string, version: string): string {
  const folder = join(directory, 'vendor');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'openai.json'), JSON.stringify({ package: 'openai', version }));
  return folder;
}

test('the one-file SDK is used only when it was built from the installed version', (t) => {
  const directory = temporaryDirectory(t);
  assert.match(vendoredSdk(vendorFolder(join(directory, 'same'), installed)) ?? '', /\/same\/vendor\/openai\.js$/);
  assert.equal(vendoredSdk(vendorFolder(join(directory, 'other'), '0.0.1')), undefined, 'a stale copy is never used');
  assert.equal(vendoredSdk(join(directory, 'absent')), undefined);
});

test('the build makes the one-file SDK, and the client and the error checks use that same copy', () => {
  const file = vendoredSdk();
  assert.ok(file, `npm run build writes ${join(buildRoot(), 'vendor', 'openai.js')}`);
  assert.equal(sdkSource, file);
  const client = new OpenAI({ apiKey: 'none', baseURL: 'http://127.0.0.1:1/v1' });
  assert.ok(client.chat.completions);
  const error = APIError.generate(401, { error: { message: 'bad key' } }, 'bad key', new Headers());
  assert.ok(error instanceof APIError);
  assert.equal(error.status, 401);
});
