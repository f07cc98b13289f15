/** The largest value (NaN when empty), without spreading the array into arguments: an hour's lags are millions. */
export const maxOf = (a: readonly number[]): number => (a.length ? a.reduce((m, x) => (x > m ? x : m), -Infinity) : NaN);
