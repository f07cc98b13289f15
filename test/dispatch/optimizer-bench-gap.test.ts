/**
 * The arithmetic behind the optimizer benchmark's verdicts (bench/optimizer.ts): the gap of a default run to its 10×
 * run, and the gap between the means over solver seeds. Pure: plans are reduced to what the gap reads.
 */
import { describe, expect, it } from 'vitest';
import { gap, seedGaps, type Run } from '../../bench/optimizer.js';
import type { Plan } from '../../src/modules/dispatch/optimizer/index.js';

const plan = (assigned: number, cost: number) => ({ totals: { assigned }, cost }) as unknown as Plan;
const runOf = (assigned: number, cost: number): Run => ({ plan: plan(assigned, cost), wallMs: 0, cpuMs: 0 });

describe('optimizer benchmark gap', () => {
  it('compares the count first, exactly 2 % being within', () => {
    expect(gap(plan(392, 392_000), plan(400, 400_000))).toMatchObject({ value: 2, met: true });
    const short = gap(plan(390, 390_000), plan(400, 400_000));
    expect(short.met).toBe(false);
    expect(short.value).toBe(2.5);
    expect(short.note).toContain('390 vs 400 trips assigned (-10, count gap +2.50 %)');
  });

  it('compares the cost per assigned trip, so that fewer trips cannot flatter a plan', () => {
    // same count: the plain cost ratio
    expect(gap(plan(100, 102_000), plan(100, 100_000)).met).toBe(true);
    expect(gap(plan(100, 102_100), plan(100, 100_000))).toMatchObject({ value: 2.1, met: false });
    // one trip fewer and a lower total cost, but dearer per trip: 1,050 against 1,000 per trip
    const fewer = gap(plan(99, 103_950), plan(100, 100_000));
    expect(fewer).toMatchObject({ value: 5, met: false });
    expect(fewer.note).toContain('cost per assigned trip +5.00 %');
  });

  it('gives the gap between the means of several seeds beside each seed’s own', () => {
    // one seed misses (427 against a lucky 437), the other is well within; the means are 427.5 and 435.5
    const g = seedGaps([
      { base: runOf(427, 427_000), ten: runOf(437, 437_000) },
      { base: runOf(428, 428_000), ten: runOf(434, 434_000) },
    ]);
    expect(g.met).toBe(true);
    expect(g.value).toBe(1.8);
    expect(g.note).toContain('trips 427, 428 vs 437, 434 (10×); per seed 2.3 %, 1.4 %, 1 of 2 within 2 %');
    expect(g.note).toContain('between the means: count 1.84 %');
    // the means miss when every seed falls short
    const all = seedGaps([
      { base: runOf(427, 427_000), ten: runOf(437, 437_000) },
      { base: runOf(425, 425_000), ten: runOf(436, 436_000) },
    ]);
    expect(all).toMatchObject({ met: false, value: 2.4 });
  });
});
