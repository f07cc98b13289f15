import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/errors.js';
import { assertTransition, canTransition, isTerminal, type Transitions } from '../../src/platform/state-machine.js';
import {
  ACTIVE_STATUSES,
  APPROVAL_ACTIONS,
  APPROVAL_TRANSITIONS,
  DISPATCH_TRANSITIONS,
  TERMINAL_STATUSES,
  TRIP_TRANSITIONS,
} from '../../src/modules/logistics/service/transitions.js';
import { type TripStatus } from '../../src/modules/logistics/schemas.js';
import { MERCHANT_TRANSITIONS, ORDER_TRANSITIONS } from '../../src/modules/commerce/service/orders.js';
import { PAYMENT_STATUS_TRANSITIONS, REVIEW_TRANSITIONS } from '../../src/modules/money/service/ledger.js';
import { DRIVER_SETTLEMENT_TRANSITIONS } from '../../src/modules/money/service/driver-settlements.js';

/** The state machines as data, checked without HTTP or a database: each one's shape, and the rules the services rely on. */

const states = <S extends string>(m: Transitions<S>) => Object.keys(m) as S[];
const edges = <S extends string>(m: Transitions<S>) => states(m).flatMap((from) => m[from].map((to) => [from, to] as const));

/** Every state reachable from `start` by the machine's moves. */
function reachable<S extends string>(m: Transitions<S>, start: S): Set<S> {
  const seen = new Set<S>([start]);
  const queue = [start];
  while (queue.length)
    for (const next of m[queue.shift()!]) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  return seen;
}

/** A machine's moves all land on states it knows, and a sub-machine's moves are moves of the machine. */
function expectWellFormed<S extends string>(m: Transitions<S>) {
  for (const [from, to] of edges(m)) expect(states(m), `${from} → ${to}`).toContain(to);
}
function expectSubset<S extends string>(sub: Transitions<S>, of: Transitions<S>) {
  expect(states(sub).sort()).toEqual(states(of).sort());
  for (const [from, to] of edges(sub)) expect(canTransition(of, from, to), `${from} → ${to}`).toBe(true);
}

describe('the state machine helpers', () => {
  const m: Transitions<'a' | 'b' | 'c'> = { a: ['b'], b: ['c', 'a'], c: [] };

  it('allows exactly the listed moves', () => {
    expect(canTransition(m, 'a', 'b')).toBe(true);
    expect(canTransition(m, 'b', 'a')).toBe(true);
    expect(canTransition(m, 'a', 'c')).toBe(false);
    expect(canTransition(m, 'a', 'a')).toBe(false);
    expect(canTransition(m, 'c', 'a')).toBe(false);
  });

  it('refuses a move with 409 INVALID_TRANSITION naming the current state', () => {
    expect(() => assertTransition('Thing', m, 'a', 'b')).not.toThrow();
    const err = (() => {
      try {
        assertTransition('Thing', m, 'c', 'a');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 409, code: 'INVALID_TRANSITION', extra: { current_status: 'c' } });
  });

  it('a state without moves is terminal', () => {
    expect(isTerminal(m, 'c')).toBe(true);
    expect(isTerminal(m, 'a')).toBe(false);
  });
});

describe('trips', () => {
  it('every status is reachable from pending, and the terminal ones have no way out', () => {
    expectWellFormed(TRIP_TRANSITIONS);
    expect([...reachable(TRIP_TRANSITIONS, 'pending')].sort()).toEqual(states(TRIP_TRANSITIONS).sort());
    expect(
      states(TRIP_TRANSITIONS)
        .filter((s) => isTerminal(TRIP_TRANSITIONS, s))
        .sort(),
    ).toEqual([...TERMINAL_STATUSES].sort());
  });

  it('a trip occupies its driver from assignment until it ends (returning included), never before or after', () => {
    const active = new Set<TripStatus>(ACTIVE_STATUSES);
    expect(active.has('pending')).toBe(false);
    for (const s of TERMINAL_STATUSES) expect(active.has(s), s).toBe(false);
    // Out of pending, a trip is active; an active trip stays active or ends (or goes back to pending, unassigned).
    for (const to of TRIP_TRANSITIONS.pending.filter((s) => s !== 'cancelled')) expect(active.has(to), to).toBe(true);
    for (const from of ACTIVE_STATUSES)
      for (const to of TRIP_TRANSITIONS[from])
        expect(active.has(to) || TERMINAL_STATUSES.includes(to) || to === 'pending', `${from} → ${to}`).toBe(true);
  });

  it('a reassignment is assigned → assigned and accepted → assigned; once picked up there is no way back to a driver choice', () => {
    expect(canTransition(TRIP_TRANSITIONS, 'assigned', 'assigned')).toBe(true);
    expect(canTransition(TRIP_TRANSITIONS, 'accepted', 'assigned')).toBe(true);
    for (const from of ['picked_up', 'in_transit', 'returning'] as const) {
      expect(canTransition(TRIP_TRANSITIONS, from, 'assigned'), from).toBe(false);
      expect(canTransition(TRIP_TRANSITIONS, from, 'pending'), from).toBe(false);
    }
  });

  it('a failed delivery happens in transit only: to returning (then returned) or failed', () => {
    const into = (to: TripStatus) => states(TRIP_TRANSITIONS).filter((from) => canTransition(TRIP_TRANSITIONS, from, to));
    expect(into('returning')).toEqual(['in_transit']);
    expect(into('failed')).toEqual(['in_transit']);
    expect(into('returned')).toEqual(['returning']);
    expect(into('completed')).toEqual(['in_transit']);
  });

  it("dispatch's status operation is a part of the machine: no pickup, no delivery, no assignment through it", () => {
    expectSubset(DISPATCH_TRANSITIONS, TRIP_TRANSITIONS);
    for (const [from, to] of edges(DISPATCH_TRANSITIONS))
      expect(['assigned', 'accepted', 'picked_up', 'in_transit', 'completed'], `${from} → ${to}`).not.toContain(to);
  });
});

describe('drivers and merchants (approval)', () => {
  it('pending → approved | rejected; approved ⇄ suspended; rejected is final', () => {
    expectWellFormed(APPROVAL_TRANSITIONS);
    expect(isTerminal(APPROVAL_TRANSITIONS, 'rejected')).toBe(true);
    expect(canTransition(APPROVAL_TRANSITIONS, 'suspended', 'rejected')).toBe(false);
  });

  it('each action is one move of the machine, and the machine has no move without an action', () => {
    const byAction = Object.values(APPROVAL_ACTIONS).map(({ from, to }) => `${from}→${to}`);
    for (const { from, to } of Object.values(APPROVAL_ACTIONS)) expect(canTransition(APPROVAL_TRANSITIONS, from, to)).toBe(true);
    expect(byAction.sort()).toEqual(
      edges(APPROVAL_TRANSITIONS)
        .map(([f, t]) => `${f}→${t}`)
        .sort(),
    );
    // approve does not double as reactivate.
    expect(APPROVAL_ACTIONS.approve.from).not.toBe(APPROVAL_ACTIONS.reactivate.from);
  });
});

describe('orders', () => {
  it('every status is reachable from pending_confirmation; delivered, cancelled and returned are terminal', () => {
    expectWellFormed(ORDER_TRANSITIONS);
    expect([...reachable(ORDER_TRANSITIONS, 'pending_confirmation')].sort()).toEqual(states(ORDER_TRANSITIONS).sort());
    expect(
      states(ORDER_TRANSITIONS)
        .filter((s) => isTerminal(ORDER_TRANSITIONS, s))
        .sort(),
    ).toEqual(['cancelled', 'delivered', 'returned']);
    expect(ORDER_TRANSITIONS.delivery_failed).toEqual(['returned']);
  });

  it('the merchant moves an order by hand up to ready and may cancel until delivery; the rest follows the trip', () => {
    expectSubset(MERCHANT_TRANSITIONS, ORDER_TRANSITIONS);
    const byHand = edges(MERCHANT_TRANSITIONS).filter(([, to]) => to !== 'cancelled');
    expect(byHand).toEqual([
      ['pending_confirmation', 'confirmed'],
      ['confirmed', 'preparing'],
      ['preparing', 'ready'],
    ]);
    for (const s of ['pending_confirmation', 'confirmed', 'preparing', 'ready', 'in_delivery'] as const)
      expect(canTransition(MERCHANT_TRANSITIONS, s, 'cancelled'), s).toBe(true);
    for (const to of ['in_delivery', 'delivered', 'delivery_failed', 'returned'] as const)
      expect(
        states(MERCHANT_TRANSITIONS).some((from) => canTransition(MERCHANT_TRANSITIONS, from, to)),
        to,
      ).toBe(false);
  });
});

describe('money', () => {
  it('payment status: paid only from pending, pending_review or authorized; refunds only after paid; refunded is final', () => {
    expectWellFormed(PAYMENT_STATUS_TRANSITIONS);
    const into = (to: string) =>
      edges(PAYMENT_STATUS_TRANSITIONS)
        .filter(([, t]) => t === to)
        .map(([f]) => f)
        .sort();
    expect(into('paid')).toEqual(['authorized', 'pending', 'pending_review']);
    expect(into('refunded')).toEqual(['paid', 'partially_refunded']);
    expect(into('partially_refunded')).toEqual(['paid', 'partially_refunded']);
    expect(isTerminal(PAYMENT_STATUS_TRANSITIONS, 'refunded')).toBe(true);
    // A failed payment is retried through a new proof, never straight to paid.
    expect(PAYMENT_STATUS_TRANSITIONS.failed).toEqual(['pending_review']);
  });

  it('payment review: a rejected review reopens with a new proof; approved and cancelled are final', () => {
    expectWellFormed(REVIEW_TRANSITIONS);
    expect(canTransition(REVIEW_TRANSITIONS, 'rejected', 'pending')).toBe(true);
    expect(isTerminal(REVIEW_TRANSITIONS, 'approved')).toBe(true);
    expect(isTerminal(REVIEW_TRANSITIONS, 'cancelled')).toBe(true);
    expect(canTransition(REVIEW_TRANSITIONS, 'rejected', 'approved')).toBe(false);
  });

  it('a driver settlement is paid once', () => {
    expect(DRIVER_SETTLEMENT_TRANSITIONS).toEqual({ pending: ['paid'], paid: [] });
    expect(() => assertTransition('Settlement', DRIVER_SETTLEMENT_TRANSITIONS, 'paid', 'paid')).toThrow(AppError);
  });
});
