import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineEnvironment, type Environment } from '../../src/eval/environment.js';
import { findItems, keyedItems, surveyItems } from '../../src/run/environment-entries.js';

/** An environment over N generated items that counts how many items() handed out, and whether it was closed. */
function countingEnvironment(count: number, options: { duplicateAt?: number; images?: string[] } = {}) {
  const seen = { pulled: 0, closed: 0 };
  const n = (item: unknown) => (item as { n: number }).n;
  const environment: Environment = defineEnvironment<unknown>({
    name: 'counting',
    version: '1',
    async *items() {
      try {
        for (let index = 0; index < count; index++) {
          seen.pulled++;
          yield { n: index };
        }
      } finally {
        seen.closed++;
      }
    },
    id: (item) => `item-${n(item) === options.duplicateAt ? 0 : n(item)}`,
    prompt: (item) => `question ${n(item)}`,
    sandbox: (item) => ({ image: options.images?.[n(item) % options.images.length] }),
  });
  return { environment, seen };
}

test('keyedItems keys items as they come, stops reading at the limit even when items() ignores it', async () => {
  const { environment, seen } = countingEnvironment(1000);
  const keys: string[] = [];
  for await (const keyed of keyedItems(environment, { limit: 3 })) keys.push(keyed.key);
  assert.deepEqual(keys, ['item-0', 'item-1', 'item-2']);
  assert.equal(seen.pulled, 3, 'no item past the limit is asked for');
  assert.equal(seen.closed, 1, 'the reader is closed');
});

test('surveyItems counts the items and their images in one pass, and a duplicate id stops it', async () => {
  const { environment } = countingEnvironment(10, { images: ['a:1', 'b:2'] });
  const survey = await surveyItems(environment, {}, 'default:image');
  assert.deepEqual(survey, { items: 10, images: ['a:1', 'b:2'], builds: [] });
  const plain = countingEnvironment(4);
  assert.deepEqual(await surveyItems(plain.environment, {}, 'default:image'), {
    items: 4,
    images: ['default:image'],
    builds: [],
  });
  const duplicate = countingEnvironment(10, { duplicateAt: 6 });
  await assert.rejects(surveyItems(duplicate.environment, {}, 'x'), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'dataset_duplicate_id');
    assert.match(error.message, /duplicate id "item-0" at rows 1 and 7/);
    return true;
  });
});

test('findItems keeps only the asked keys and stops reading once it has them all', async () => {
  const { environment, seen } = countingEnvironment(1000);
  const found = await findItems(environment, {}, new Set(['item-2', 'item-5']));
  assert.deepEqual([...found.keys()], ['item-2', 'item-5']);
  assert.deepEqual(found.get('item-5')!.item, { n: 5 });
  assert.equal(seen.pulled, 6);
  assert.equal(seen.closed, 1);
});
