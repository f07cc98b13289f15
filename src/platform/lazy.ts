/**
 * Heavy optional dependencies (exceljs for the xlsx reports, @aws-sdk/client-s3 for the S3 storage
 * driver) are imported on first use, not at start: most processes never need them, and loading them
 * costs start time and resident memory (README, "Start time and memory").
 */
const loaded = new Set<string>();

/** Memoizes a dynamic `import()` and records, once it has resolved, that `name` is loaded. */
export function lazyModule<T>(name: string, load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= load().then(
      (m) => {
        loaded.add(name);
        return m;
      },
      (err: unknown) => {
        pending = undefined;
        throw err;
      },
    ));
}

/** The lazy modules loaded so far in this process (for tests and diagnostics). */
export function lazyModulesLoaded(): string[] {
  return [...loaded].sort();
}
