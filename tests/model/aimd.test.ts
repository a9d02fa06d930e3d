import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  admitted,
  afterOverload,
  afterSuccess,
  DECREASE,
  initialAimdState,
  type AimdLimits,
  type AimdState,
} from '../../src/model/aimd.js';

const LIMITS: AimdLimits = { min: 2, max: 64, adaptive: true };

test('starts at the cap: an endpoint that never refuses is never throttled', () => {
  const state = initialAimdState(LIMITS);
  assert.equal(admitted(state, LIMITS), 64);
  assert.equal(afterSuccess(state, LIMITS, 64), state, 'at the cap, success changes nothing');
});

test('an overload cuts the level to DECREASE × the load refused, once per round', () => {
  const start = initialAimdState(LIMITS);
  const cut = afterOverload(start, LIMITS, { startedEpoch: 0, load: 20, now: 0 });
  assert.equal(cut.level, 20 * DECREASE, 'from the 20 really in flight, not the untested 64');
  assert.equal(cut.epoch, 1);
  assert.equal(cut.ceiling, 20);
  // Another refusal of the same round, at a higher load: it says nothing new, no second cut.
  const again = afterOverload(cut, LIMITS, { startedEpoch: 0, load: 30, now: 0 });
  assert.equal(again.level, cut.level);
  assert.equal(again.epoch, 1);
  // A request started after the cut that is refused too: the smaller level was too much as well.
  const next = afterOverload(cut, LIMITS, { startedEpoch: 1, load: 16, now: 0 });
  assert.equal(next.level, 16 * DECREASE);
  assert.equal(next.epoch, 2);
});

test('a start-up burst settles in one round: the lowest refused load of the burst sets the level', () => {
  // 64 sent at once to an endpoint taking 16: the 17th to the 64th are refused, in any order.
  let state = initialAimdState(LIMITS);
  for (const load of [64, 40, 17, 33, 18, 50]) state = afterOverload(state, LIMITS, { startedEpoch: 0, load, now: 0 });
  assert.equal(state.epoch, 1, 'one cut, not a cascade');
  assert.equal(state.level, 17 * DECREASE);
  assert.equal(admitted(state, LIMITS), Math.floor(17 * DECREASE));
});

test('never below min, never above the cap, whatever the sequence', () => {
  let state: AimdState = initialAimdState(LIMITS);
  for (let round = 0; round < 50; round++)
    state = afterOverload(state, LIMITS, { startedEpoch: state.epoch, load: 64, now: 0 });
  assert.equal(state.level, LIMITS.min);
  assert.equal(admitted(state, LIMITS), 2);
  for (let success = 0; success < 100_000; success++) state = afterSuccess(state, LIMITS, admitted(state, LIMITS));
  assert.equal(state.level, LIMITS.max);
  assert.equal(admitted(state, LIMITS), 64);
  // Randomised: the admitted level stays within [min, max] at every step.
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let step = 0; step < 20_000; step++) {
    const inFlight = 1 + Math.floor(random() * 80);
    state =
      random() < 0.05
        ? afterOverload(state, LIMITS, {
            startedEpoch: state.epoch - (random() < 0.5 ? 1 : 0),
            load: inFlight,
            now: step,
          })
        : afterSuccess(state, LIMITS, inFlight);
    const level = admitted(state, LIMITS);
    assert.ok(level >= 2 && level <= 64, `step ${step}: level ${level}`);
  }
});

test('additive increase: one more request per round of answers, slower near the last ceiling', () => {
  let state: AimdState = { level: 10, ceiling: 0, epoch: 1, pausedUntil: 0 };
  for (let answer = 0; answer < 10; answer++) state = afterSuccess(state, LIMITS, admitted(state, LIMITS));
  assert.equal(admitted(state, LIMITS), 10, 'just under 11 after one round of 10 (1/level each)');
  state = afterSuccess(state, LIMITS, admitted(state, LIMITS));
  assert.equal(admitted(state, LIMITS), 11);
  // Near the level where the endpoint refused last time, growth is four times slower.
  let probing: AimdState = { level: 15, ceiling: 16, epoch: 1, pausedUntil: 0 };
  for (let answer = 0; answer < 15; answer++) probing = afterSuccess(probing, LIMITS, 15);
  assert.ok(probing.level < 15.3, `probing grew to ${probing.level}`);
});

test('an idle window does not grow: successes count only when the level is in use', () => {
  const state: AimdState = { level: 10, ceiling: 0, epoch: 1, pausedUntil: 0 };
  assert.equal(afterSuccess(state, LIMITS, 3), state);
  assert.ok(afterSuccess(state, LIMITS, 10).level > 10);
});

test('retry-after closes the gate until then, also in fixed mode, and never moves it earlier', () => {
  const fixed: AimdLimits = { min: 1, max: 8, adaptive: false };
  const state = initialAimdState(fixed);
  const paused = afterOverload(state, fixed, { startedEpoch: 0, load: 8, retryAfterMs: 2_000, now: 1_000 });
  assert.equal(paused.pausedUntil, 3_000);
  assert.equal(paused.level, 8, 'fixed mode: the level never moves');
  const shorter = afterOverload(paused, fixed, { startedEpoch: 0, load: 8, retryAfterMs: 500, now: 1_100 });
  assert.equal(shorter.pausedUntil, 3_000);
  assert.equal(afterSuccess(paused, fixed, 8), paused);
});

test('min above the cap: the cap still wins', () => {
  const limits: AimdLimits = { min: 10, max: 4, adaptive: true };
  assert.equal(admitted({ level: 1, ceiling: 0, epoch: 0, pausedUntil: 0 }, limits), 4);
});

test('no cap configured (max Infinity): the first overload sizes the level from what was in flight', () => {
  const unbounded: AimdLimits = { min: 1, max: Number.POSITIVE_INFINITY, adaptive: true };
  const state = initialAimdState(unbounded);
  const cut = afterOverload(state, unbounded, { startedEpoch: 0, load: 30, now: 0 });
  assert.equal(admitted(cut, unbounded), Math.floor(30 * DECREASE));
});
