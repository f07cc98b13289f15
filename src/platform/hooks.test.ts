import { describe, expect, it } from 'vitest';
import { assertProvided, forward, hook } from './hooks.js';

describe('hook', () => {
  it('runs every subscriber in order, awaiting each; a failure reaches the caller', async () => {
    const h = hook<[string]>();
    const seen: string[] = [];
    h.subscribe(async (x) => void seen.push(`a:${x}`));
    h.subscribe((x) => void seen.push(`b:${x}`));
    await h.run('1');
    expect(seen).toEqual(['a:1', 'b:1']);
    h.subscribe(() => Promise.reject(new Error('refused')));
    await expect(h.run('2')).rejects.toThrow('refused');
  });
});

describe('forward', () => {
  it('forwards to the implementation provided later, and refuses use before', () => {
    const f = forward<{ n(): number; k: string }>('thing');
    expect(() => f.ref.n()).toThrow('thing is used before the composition root provided it');
    expect(() => assertProvided(f)).toThrow('Composition incomplete: thing not provided');
    f.provide({ n: () => 3, k: 'v' });
    expect(f.ref.n()).toBe(3);
    expect(f.ref.k).toBe('v');
    expect(() => assertProvided(f)).not.toThrow();
    expect(() => f.provide({ n: () => 4, k: 'w' })).toThrow('provided twice');
  });
});
