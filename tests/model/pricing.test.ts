import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PricingSchema } from '../../src/config/pricing.js';
import { addUsage, emptyUsage, type Usage } from '../../src/model/messages.js';
import { costOf, pricedUsage } from '../../src/model/pricing.js';

const tokens = (prompt: number, completion: number, cached = 0, cost: number | null = null): Usage => ({
  ...emptyUsage(),
  prompt_tokens: prompt,
  completion_tokens: completion,
  cached_tokens: cached,
  cost,
});

test('costOf: uncached prompt tokens at input, cached at cached_input, completion at output, per 1M', () => {
  assert.equal(costOf(tokens(1_000_000, 0), { input: 2, output: 8 }), 2);
  assert.equal(costOf(tokens(1000, 500, 400), { input: 2, output: 8, cached_input: 0.5 }), 0.0054);
  // cached_input absent: a cached token costs what any prompt token does (never below the bill).
  assert.equal(costOf(tokens(1000, 0, 1000), { input: 3, output: 1 }), 0.003);
  // Decimal prices whose binary products drift still come out as the decimal result.
  assert.equal(costOf(tokens(3, 0), { input: 0.1, output: 0 }), 0.0000003);
  assert.equal(costOf(tokens(7, 11), { input: 0.15, output: 0.6 }), 0.00000765);
});

test('pricedUsage: the provider figure wins, then the table, else unknown naming the model', () => {
  const pricing = PricingSchema.parse({ priced: { input: 1, output: 2 } });
  assert.deepEqual(pricedUsage(tokens(100, 10, 0, 0.5), 'priced', pricing), {
    ...tokens(100, 10, 0, 0.5),
    cost_source: 'provider',
    unpriced_models: [],
  });
  assert.equal(pricedUsage(tokens(1_000_000, 1_000_000), 'priced', pricing).cost, 3);
  assert.equal(pricedUsage(tokens(1, 1), 'priced', pricing).cost_source, 'pricing');
  const unknown = pricedUsage(tokens(100, 10), 'other', pricing);
  assert.equal(unknown.cost, null);
  assert.equal(unknown.cost_source, 'unknown');
  assert.deepEqual(unknown.unpriced_models, ['other']);
  assert.deepEqual(pricedUsage(tokens(100, 10), 'other', undefined).unpriced_models, ['other']);
});

test('addUsage: known costs sum exactly, sources combine, unpriced models are listed once', () => {
  const total = emptyUsage();
  addUsage(total, { ...tokens(1, 1, 0, 0.1), cost_source: 'provider', unpriced_models: [] });
  addUsage(total, { ...tokens(1, 1, 0, 0.2), cost_source: 'provider', unpriced_models: [] });
  assert.equal(total.cost, 0.3);
  assert.equal(total.cost_source, 'provider');
  addUsage(total, { ...tokens(1, 1), cost_source: 'unknown', unpriced_models: ['judge'] });
  addUsage(total, { ...tokens(1, 1), cost_source: 'unknown', unpriced_models: ['judge'] });
  assert.equal(total.cost_source, 'provider', 'a partial sum keeps its source; unpriced_models says what is missing');
  assert.deepEqual(total.unpriced_models, ['judge']);
  addUsage(total, { ...tokens(1, 1, 0, 0.05), cost_source: 'pricing', unpriced_models: [] });
  assert.equal(total.cost_source, 'mixed');
  assert.equal(total.cost, 0.35);
  const none = emptyUsage();
  addUsage(none, { ...tokens(1, 1), cost_source: 'unknown', unpriced_models: ['m'] });
  assert.equal(none.cost, null, 'no known cost is null, never 0');
  assert.equal(none.cost_source, 'unknown');
});

test('pricing: a strict schema whose errors name the field', () => {
  const typo = PricingSchema.safeParse({ m: { input: 1, output: 1, cache_input: 1 } });
  assert.equal(typo.success, false);
  assert.match(JSON.stringify(typo.error!.issues), /cache_input/);
  const negative = PricingSchema.safeParse({ m: { input: -1, output: 1 } });
  assert.deepEqual(negative.error!.issues[0]!.path, ['m', 'input']);
  const missing = PricingSchema.safeParse({ m: { input: 1 } });
  assert.deepEqual(missing.error!.issues[0]!.path, ['m', 'output']);
  assert.match(missing.error!.issues[0]!.message, /USD per 1M tokens/);
});
