import assert from 'node:assert/strict';
import { test } from 'node:test';
import { costText, usd } from '../../src/util/cost-text.js';

test('usd: readable for sub-cent and large amounts', () => {
  assert.equal(usd(0), '$0');
  assert.equal(usd(0.0054), '$0.0054');
  assert.equal(usd(0.123456), '$0.1235');
  assert.equal(usd(12.5), '$12.50');
});

test('costText: known, unknown with the models named, both, or none recorded; never a silent $0', () => {
  assert.equal(costText({ usd: 0.024 }), '$0.024');
  assert.equal(costText({ usd: 0, unpricedModels: [] }), '$0');
  assert.equal(costText({ usd: null, unpricedModels: ['m'] }), 'unknown (no price known for m)');
  assert.equal(costText({ usd: 0, unpricedModels: ['m', 'j'] }), 'unknown (no price known for m, j)');
  assert.equal(costText({ usd: 1.5, unpricedModels: ['j'] }), '$1.50 + unknown (no price known for j)');
  assert.equal(costText({ usd: null }), 'none recorded');
  assert.equal(costText({ usd: undefined }), 'none recorded');
});
