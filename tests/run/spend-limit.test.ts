import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetStopReason, SpendMeter } from '../../src/run/spend-limit.js';

test('SpendMeter: stops once at the limit, counts on afterwards, and starts from earlier spend', () => {
  const meter = new SpendMeter(1, 0.7);
  assert.equal(meter.check(), undefined);
  assert.equal(meter.add({ cost: 0.2 }), undefined);
  const stop = meter.add({ cost: 0.1 });
  assert.ok(stop, 'exactly at the limit (0.7 + 0.2 + 0.1 without float drift) stops');
  assert.equal(stop.reachedUsd, 1);
  assert.equal(meter.add({ cost: 0.25 }), undefined, 'the stop is reported once');
  assert.equal(stop.spentUsd, 1.25, 'rollouts landing after the stop still count');
  assert.equal(budgetStopReason(stop), 'spend $1.00 reached the --max-cost limit of $1.00');
  assert.ok(new SpendMeter(1, 1).check(), 'a rerun with the same limit dispatches nothing');
  assert.equal(new SpendMeter(undefined, 99).add({ cost: 5, unpriced_models: ['m'] }), undefined, 'no limit, no stop');
});

test('SpendMeter: a call of unknown cost under a limit stops, naming the model', () => {
  const stop = new SpendMeter(5, 0).add({ cost: 0.1, unpriced_models: ['judge-x'] });
  assert.deepEqual(stop?.unpricedModels, ['judge-x']);
  assert.match(budgetStopReason(stop!), /cannot be kept: no price known for model judge-x/);
});
