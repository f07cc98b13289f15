/**
 * Cross-module wiring without a registry.
 *
 * - `hook()`: a typed reaction point, declared by the module that fires it (e.g. identity's `userDeactivated`),
 *   subscribed by the composition root (src/modules/index.ts). Subscribers run in order, in the caller's
 *   transaction, so the reaction commits or rolls back with the change.
 * - `forward()`: a dependency on a module built later (a cycle such as logistics needing commerce's order facts
 *   while commerce creates trips). The module receives a plain typed object; the composition root provides the
 *   implementation once every module exists, and `assertProvided` refuses to start if one is missing.
 */
export interface Hook<A extends unknown[]> {
  subscribe(fn: (...args: A) => Promise<void> | void): void;
  run(...args: A): Promise<void>;
}

export function hook<A extends unknown[]>(): Hook<A> {
  const subscribers: ((...args: A) => Promise<void> | void)[] = [];
  return {
    subscribe: (fn) => void subscribers.push(fn),
    async run(...args) {
      for (const fn of subscribers) await fn(...args);
    },
  };
}

export interface Forward<T extends object> {
  /** What the dependent module receives: forwards every property to the implementation provided later. */
  readonly ref: T;
  provide(impl: T): void;
  readonly provided: boolean;
  readonly name: string;
}

export function forward<T extends object>(name: string): Forward<T> {
  let impl: T | null = null;
  const ref = new Proxy({} as T, {
    get(_target, key) {
      if (!impl) throw new Error(`${name} is used before the composition root provided it`);
      const v = (impl as Record<string | symbol, unknown>)[key];
      return typeof v === 'function' ? v.bind(impl) : v;
    },
  });
  return {
    ref,
    name,
    get provided() {
      return impl !== null;
    },
    provide(v) {
      if (impl) throw new Error(`${name} provided twice`);
      impl = v;
    },
  };
}

export function assertProvided(...refs: Forward<object>[]): void {
  const missing = refs.filter((r) => !r.provided).map((r) => r.name);
  if (missing.length) throw new Error(`Composition incomplete: ${missing.join(', ')} not provided`);
}
