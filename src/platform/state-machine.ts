import { AppError } from './errors.js';

/** A state machine as data: for each state, the states it may move to. */
export type Transitions<S extends string> = Record<S, readonly S[]>;

export function canTransition<S extends string>(machine: Transitions<S>, from: S, to: S): boolean {
  return (machine[from] ?? []).includes(to);
}

/** Throws 409 INVALID_TRANSITION (naming the current state) when the machine does not allow the move. */
export function assertTransition<S extends string>(entity: string, machine: Transitions<S>, from: S, to: S): void {
  if (!canTransition(machine, from, to)) throw AppError.invalidTransition(entity, from, to);
}

export function isTerminal<S extends string>(machine: Transitions<S>, state: S): boolean {
  return (machine[state] ?? []).length === 0;
}
