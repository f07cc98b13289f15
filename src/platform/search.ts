/**
 * A free-text filter as an `ILIKE` pattern that matches the text literally anywhere: `%`, `_` and `\`
 * (LIKE's default escape character) are escaped, so `q=%` finds a percent sign, not everything.
 */
export const containsPattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
