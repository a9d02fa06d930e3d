import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  groupAdvantages,
  majorityAgreement,
  meanInterval,
  passAtK,
  passAtKTable,
  tQuantile975,
  wilsonInterval,
} from '../../src/eval/metrics.js';

const close = (actual: number | null, expected: number, tolerance = 1e-3) => {
  assert.ok(actual !== null && Math.abs(actual - expected) < tolerance, `expected ${expected}, got ${actual}`);
};

test('pass@k matches hand-computed values of 1 − C(n−c,k)/C(n,k)', () => {
  // n=5, c=2: pass@1 = 2/5; pass@2 = 1 − C(3,2)/C(5,2) = 1 − 3/10; pass@3 = 1 − C(3,3)/C(5,3) = 1 − 1/10; pass@4 = 1 (n−c < k).
  close(passAtK(5, 2, 1), 0.4, 1e-12);
  close(passAtK(5, 2, 2), 0.7, 1e-12);
  close(passAtK(5, 2, 3), 0.9, 1e-12);
  assert.equal(passAtK(5, 2, 4), 1);
  assert.equal(passAtK(5, 0, 5), 0);
  // Large n stays finite: 1 − C(990, 10)/C(1000, 10).
  close(
    passAtK(1000, 10, 10),
    1 - [...Array(10).keys()].reduce((product, i) => product * ((990 - i) / (1000 - i)), 1),
    1e-12,
  );
  assert.throws(() => passAtK(3, 1, 4), /1 ≤ k ≤ n/);
});

test('the pass@k table averages over items with at least k samples', () => {
  // Item A: n=4, c=1 → pass@1 .25, pass@2 .5, pass@3 .75, pass@4 1. Item B: n=4, c=4 → 1 everywhere. Item C: n=2, c=0 → 0, 0.
  const table = passAtKTable([
    { n: 4, passed: 1 },
    { n: 4, passed: 4 },
    { n: 2, passed: 0 },
  ]);
  close(table['1']!, (0.25 + 1 + 0) / 3, 1e-12);
  close(table['2']!, (0.5 + 1 + 0) / 3, 1e-12);
  close(table['3']!, (0.75 + 1) / 2, 1e-12);
  close(table['4']!, 1, 1e-12);
  assert.deepEqual(Object.keys(table), ['1', '2', '3', '4']);
});

test('mean interval uses Student t; Wilson interval stays inside [0, 1]', () => {
  // Values 1..5: mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776 → half width 2.776·1.5811/√5 = 1.9630.
  const estimate = meanInterval([1, 2, 3, 4, 5]);
  close(estimate.value, 3, 1e-12);
  close(estimate.low, 3 - 1.963, 1e-3);
  close(estimate.high, 3 + 1.963, 1e-3);
  assert.deepEqual(meanInterval([0.5]), { value: 0.5, low: null, high: null, n: 1 });
  // 0, 1, 1: mean 2/3, half width 4.303·0.57735/√3 = 1.4343 → clipped to [0, 1] when bounds are given.
  const unclipped = meanInterval([0, 1, 1]);
  close(unclipped.low, 2 / 3 - 1.4343, 1e-3);
  assert.deepEqual(meanInterval([0, 1, 1], [0, 1]), { value: 2 / 3, low: 0, high: 1, n: 3 });
  close(tQuantile975(30), 2.042);
  close(tQuantile975(31), 2.0395, 2e-4);
  close(tQuantile975(1000), 1.9623, 2e-4);
  // Wilson 8/10: center (0.8 + 1.9208/10)/(1.38415) = 0.71672, half 1.95996/1.38415·sqrt(0.016 + 0.0096)=0.22651.
  const wilson = wilsonInterval(8, 10);
  close(wilson.low, 0.4902, 1e-3);
  close(wilson.high, 0.9433, 1e-3);
  const all = wilsonInterval(10, 10);
  assert.equal(all.value, 1);
  assert.ok(all.high! <= 1 && all.low! > 0.65);
  assert.deepEqual(wilsonInterval(0, 0), { value: null, low: null, high: null, n: 0 });
});

test('group advantages are centred (sum ≈ 0) and scaled by the group std', () => {
  const advantages = groupAdvantages([1, 0, 0, 1, null]);
  assert.equal(advantages[4], null);
  const scored = advantages.slice(0, 4) as number[];
  close(
    scored.reduce((sum, value) => sum + value, 0),
    0,
    1e-9,
  );
  close(scored[0]!, 0.5 / (0.5 + 1e-6), 1e-9);
  assert.deepEqual(groupAdvantages([0.7, 0.7]), [0, 0]);
  assert.deepEqual(groupAdvantages([null]), [null]);
});

test('majority agreement', () => {
  assert.deepEqual(majorityAgreement([true, true, false]), { pass: true, agreement: 2 / 3 });
  assert.deepEqual(majorityAgreement([false, true]), { pass: false, agreement: 0.5 });
  assert.deepEqual(majorityAgreement([true, true, true]), { pass: true, agreement: 1 });
});
