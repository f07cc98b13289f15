import { readFileSync } from 'node:fs';

/**
 * The shipped blocklist (NIST SP 800-63B 3.1.1.2), read once when the module loads. The file sits next to the
 * sources and is copied beside the compiled files by the build (scripts/build-if-stale.mjs), so the same relative
 * path serves `tsx` and `node dist/`.
 */
const COMMON = new Set(
  readFileSync(new URL('../common-passwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#')),
);

/**
 * NIST SP 800-63B: at least 10 characters, no composition rules, not in the shipped list of common
 * passwords (also with trailing punctuation removed, `Password123!`), not one repeated character,
 * not containing the email's name. Every route that sets a password goes through here.
 */
export function passwordProblems(password: string, email?: string | null): string | null {
  if (password.length < 10) return 'must be at least 10 characters';
  if (password.length > 200) return 'must be at most 200 characters';
  const lower = password.toLowerCase();
  if (COMMON.has(lower) || COMMON.has(lower.replace(/[^a-z0-9]+$/, ''))) return 'is too common';
  if (/^(.)\1+$/.test(password)) return 'is one repeated character';
  if (email && password.toLowerCase().includes(email.split('@')[0].toLowerCase()) && email.split('@')[0].length >= 4)
    return 'must not contain the email name';
  return null;
}
