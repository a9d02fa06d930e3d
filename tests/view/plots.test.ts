import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunComparison } from '../../src/report/run-comparison.js';
import { comparePage } from '../../src/view/compare-page.js';
import { columnPlot, histogram, weightedHistogram } from '../../src/view/plots.js';

describe('viewer plots and compare table', () => {
  it('histograms keep every value: equal-width bins from min to max, the maximum in the last bin', () => {
    const values = [0, 0.1, 0.5, 0.5, 0.99, 1];
    const bins = histogram(values, 4);
    assert.deepEqual(
      bins.map((bin) => bin.count),
      [2, 0, 2, 2],
    );
    assert.deepEqual(histogram([3, 3, 3]), [{ label: '3', count: 3 }]);
    assert.deepEqual(histogram([]), []);
    // Few distinct whole numbers (turns) stay one column each; many are binned.
    assert.deepEqual(
      weightedHistogram([
        { value: 1, count: 5 },
        { value: 4, count: 2 },
      ]),
      [
        { label: '1', count: 5 },
        { label: '4', count: 2 },
      ],
    );
    const many = Array.from({ length: 100 }, (_, index) => ({ value: index / 100, count: 1 }));
    const binned = weightedHistogram(many, 10);
    assert.equal(binned.length, 10);
    assert.equal(
      binned.reduce((sum, bin) => sum + bin.count, 0),
      100,
    );
  });

  it('a column plot draws one bar per column, its height proportional to the count, labels escaped', () => {
    const svg = columnPlot(
      'x',
      [
        { label: '<b>', count: 2 },
        { label: 'b', count: 1 },
      ],
      { xLabel: 'x' },
    );
    const heights = [...svg.matchAll(/data-count="(\d+)"[^>]*height="([\d.]+)"/g)].map((match) => [
      Number(match[1]),
      Number(match[2]),
    ]);
    assert.equal(heights.length, 2);
    assert.equal(heights[0]![1], 2 * heights[1]![1]);
    assert.ok(!svg.includes('<b>') && svg.includes('&lt;b&gt;'));
    assert.match(columnPlot('empty', [], { xLabel: 'x' }), /data-plot-empty="empty"/);
  });

  it('compare lists the most changed items first and at most 500 of them', () => {
    const item = (key: string, change: RunComparison['items'][number]['change'], delta: number | null) => ({
      key,
      a_reward: 0,
      b_reward: delta,
      delta,
      a_passed: '0/1',
      b_passed: '0/1',
      change,
    });
    const same = Array.from({ length: 600 }, (_, index) =>
      item(`same-${String(index).padStart(3, '0')}`, 'same' as const, 0),
    );
    const estimate = { value: 0.5, low: 0.1, high: 0.9, n: 10 };
    const comparison: RunComparison = {
      a: { run: 'a', model: null, environment: null },
      b: { run: 'b', model: null, environment: null },
      pass_rate: { a: estimate, b: estimate, difference: { value: 0, low: -0.4, high: 0.4 } },
      mean_reward: { shared_items: 603, difference: { value: 0, low: null, high: null } },
      items: [
        ...same,
        item('small-gain', 'better', 0.1),
        item('big-loss', 'worse', -0.7),
        item('broke', 'regressed', -1),
      ],
    };
    const html = comparePage({ a: 'a', b: 'b' }, comparison);
    const keys = [...html.matchAll(/data-compare-key="([^"]+)"/g)].map((match) => match[1]);
    assert.equal(keys.length, 500);
    assert.deepEqual(keys.slice(0, 4), ['broke', 'big-loss', 'small-gain', 'same-000']);
    assert.match(html, /The 500 most changed of 603 items/);
  });
});
