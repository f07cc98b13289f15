import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Settings, loadConfig, readSettings } from '../../src/config.js';

const base = { NODE_ENV: 'test' };

describe('configuration, validated once at start', () => {
  it('.env.example lists every setting, so an operator sees all of them in one file', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const missing = Object.keys(Settings.properties).filter((name) => !new RegExp(`^(# ?)?${name}=`, 'm').test(example));
    expect(missing).toEqual([]);
  });

  it('every setting is named, typed, documented and defaulted (or explicitly optional)', () => {
    for (const [name, schema] of Object.entries(Settings.properties) as unknown as [string, Record<string | symbol, unknown>][]) {
      expect(typeof schema.description, name).toBe('string');
      if (!(Symbol.for('TypeBox.Optional') in schema)) expect(schema.default, name).not.toBeUndefined();
    }
    const c = loadConfig(base);
    expect(c.settings.REALTIME_HEARTBEAT_MS).toBe(15_000);
    expect(c.settings.STORAGE_DRIVER).toBe('local');
    expect(c.settings.MULTI_INSTANCE).toBe(false);
    expect(c.settings.PUSH_WEBHOOK_URL).toBeUndefined();
    expect('raw' in c).toBe(false);
  });

  it('reads integers and booleans from their text; empty means unset', () => {
    const s = readSettings({
      SYNC_ENTITY_LIMIT: '2',
      MULTI_INSTANCE: 'yes',
      S3_FORCE_PATH_STYLE: 'off',
      STORAGE_DRIVER: 'S3',
      REALTIME_HEARTBEAT_MS: '',
    });
    expect(s).toMatchObject({
      SYNC_ENTITY_LIMIT: 2,
      MULTI_INSTANCE: true,
      S3_FORCE_PATH_STYLE: false,
      STORAGE_DRIVER: 's3',
      REALTIME_HEARTBEAT_MS: 15_000,
    });
  });

  it.each([
    ['REALTIME_HEARTBEAT_MS', 'abc', 'config: REALTIME_HEARTBEAT_MS must be an integer >= 1, got "abc"'],
    ['REALTIME_MAX_STREAMS_PER_USER', '0', 'config: REALTIME_MAX_STREAMS_PER_USER must be an integer >= 1, got "0"'],
    ['PUSH_BACKOFF_MS', '1.5', 'config: PUSH_BACKOFF_MS must be an integer >= 1, got "1.5"'],
    ['STORAGE_MAX_BYTES_AVATAR', String(2 * 1024 ** 3), 'config: STORAGE_MAX_BYTES_AVATAR must be an integer in 1..1073741824'],
    ['MULTI_INSTANCE', 'maybe', 'config: MULTI_INSTANCE must be true or false, got "maybe"'],
    ['STORAGE_DRIVER', 'ftp', 'config: STORAGE_DRIVER must be "local" or "s3", got "ftp"'],
  ])('a bad %s (%s) stops the start with a clear message', (name, value, message) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(message);
  });

  it('provisioned secrets are read by name from the given environment, then the process', () => {
    const c = loadConfig({ ...base, CHAT_SECRET_ORG_SHOP: 'tok' });
    expect(c.secret('CHAT_SECRET_ORG_SHOP')).toBe('tok');
    expect(c.secret('CHAT_SECRET_NOT_SET_ANYWHERE')).toBeUndefined();
  });
});

describe('server start with a bad setting', () => {
  it('exits 1 with one clear line, before touching any database', async () => {
    const { spawnSync } = await import('node:child_process');
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, NODE_ENV: 'test', REALTIME_MAX_STREAMS_PER_USER: 'lots', DATA_DIR: '/tmp/config-test-never-created' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(res.status).toBe(1);
    expect(res.stderr.trim()).toBe('config: REALTIME_MAX_STREAMS_PER_USER must be an integer >= 1, got "lots"');
  }, 70_000);
});
