import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, toProblem } from '../../src/platform/http.js';
import { AppError } from '../../src/platform/errors.js';
import { createPostgresDatabase, poolOptionsFrom } from '../../src/platform/db/index.js';
import { freshDatabase } from '../helpers.js';
import { waitFor } from '../support.js';
import { readSettings } from '../../src/config.js';

/** Which failures mean "the database is unavailable" (503 + Retry-After) and which stay what they are. */
const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('database unavailable -> 503', () => {
  it('maps shutdown, startup, connection and pool failures to 503 DATABASE_UNAVAILABLE with retry_after', () => {
    const unavailable = [
      pgError('57P01', 'terminating connection due to administrator command'),
      pgError('57P02'),
      pgError('57P03', 'the database system is starting up'),
      pgError('53300', 'sorry, too many clients already'),
      pgError('08006'),
      pgError('08001'),
      pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      pgError('ECONNRESET'),
      new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')], ''),
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
    ];
    for (const err of unavailable) {
      expect(isDatabaseUnavailable(err), String(err)).toBe(true);
      expect(toProblem(err, 'r1')).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE', retry_after: 5 });
    }
  });

  it('reads the pool settings (DB_POOL_MAX, DB_CONNECT_TIMEOUT_MS) and refuses nonsense', () => {
    expect(poolOptionsFrom(readSettings({}))).toEqual({ max: 20, connectTimeoutMs: 5_000, preparedStatements: true });
    expect(poolOptionsFrom(readSettings({ DB_POOL_MAX: '5', DB_CONNECT_TIMEOUT_MS: '800', DB_PREPARED_STATEMENTS: 'false' }))).toEqual({
      max: 5,
      connectTimeoutMs: 800,
      preparedStatements: false,
    });
    expect(() => readSettings({ DB_POOL_MAX: '0' })).toThrow(/DB_POOL_MAX/);
    expect(() => readSettings({ DB_CONNECT_TIMEOUT_MS: 'soon' })).toThrow(/DB_CONNECT_TIMEOUT_MS/);
  });

  it('leaves other failures alone', () => {
    expect(toProblem(pgError('23505'), 'r').status).toBe(409);
    expect(toProblem(pgError('40001'), 'r').status).toBe(500);
    expect(toProblem(new Error('boom'), 'r')).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
    expect(toProblem(new AppError(422, 'X', 'Connection terminated by the merchant'), 'r').status).toBe(422);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('an exhausted pool fails within its connect timeout, as 503', async () => {
    const { url, db, drop } = await freshDatabase();
    const small = createPostgresDatabase(url!, { max: 1, connectTimeoutMs: 300 });
    try {
      // The only connection is held until the second caller has its answer: an answer at all means it gave up waiting.
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let taken!: () => void;
      const connectionTaken = new Promise<void>((r) => (taken = r));
      const holding = small.withSystem(async (tx) => {
        await tx.query('SELECT 1');
        taken();
        await released;
      });
      await connectionTaken;
      const err = await small.withSystem((tx) => tx.query('SELECT 1')).catch((e: unknown) => e);
      release();
      await holding;
      expect(toProblem(err, 'r')).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE' });
    } finally {
      await small.close();
      await db.close();
      await drop();
    }
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('tells how many connections are in use and how many callers wait for one', async () => {
    const { url, db, drop } = await freshDatabase();
    const small = createPostgresDatabase(url!, { max: 2, connectTimeoutMs: 10_000 });
    try {
      expect(small.poolStatus!()).toEqual({ max: 2, open: 0, in_use: 0, waiting: 0 });
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let held = 0;
      const hold = () =>
        small.withSystem(async (tx) => {
          await tx.query('SELECT 1');
          held++;
          await released;
        });
      const holders = [hold(), hold()];
      await waitFor(() => held === 2, { message: 'both connections taken' });
      const third = small.withSystem((tx) => tx.query('SELECT 1'));
      await waitFor(() => small.poolStatus!()!.waiting === 1, { message: 'the third caller waiting' });
      expect(small.poolStatus!()).toEqual({ max: 2, open: 2, in_use: 2, waiting: 1 });
      release();
      await Promise.all([...holders, third]);
      await waitFor(() => small.poolStatus!()!.in_use === 0, { message: 'every connection back' });
      expect(small.poolStatus!()).toMatchObject({ waiting: 0, in_use: 0 });
    } finally {
      await small.close();
      await db.close();
      await drop();
    }
  });
});
