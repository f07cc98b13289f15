import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { createTestApp, type Session, type TestApp } from '../helpers.js';
import fc from 'fast-check';
import { dereference, minimalValue, operationsOf } from '../hardening/openapi.js';
import { validOf } from '../hardening/fuzz.js';

/**
 * A bounded Schemathesis-style run (its response checks, from the npm registry's Ajv instead of Schemathesis): every
 * operation of the served document, called by each role with a request built from the document alone (required
 * fields, real demo ids for path parameters), and each answer checked against the document:
 * - not_a_server_error: no 5xx;
 * - status_code_conformance: the status (or its 4XX/5XX range) is documented for the operation;
 * - content_type_conformance: the content type is one documented for that status;
 * - response_schema_conformance: the JSON body validates against the documented schema.
 * Documented exceptions: a 5xx that the operation documents by its exact status (501 of reserved contracts, 503 of a
 * webhook without a configured secret) passes not_a_server_error; the SSE streams (`text/event-stream`, open-ended) and the logout operations (they end the session
 * the run uses) are not called.
 */

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ROLES = ['admin', 'dispatch', 'merchant', 'customer', 'driver'] as const;

let t: TestApp;
let doc: Json;
let full: Json;
let ajv: Ajv2020;
beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.req(null, { method: 'GET', url: '/api/v1/openapi.json' })).json();
  full = dereference(doc);
  ajv = addFormats(new Ajv2020({ strict: false, allErrors: false }));
  ajv.addSchema({ ...doc, $id: 'https://contract.test/openapi.json' });
});
afterAll(() => t?.close());

const compiled = new Map<string, ValidateFunction>();
function validatorFor(pointer: string): ValidateFunction {
  let v = compiled.get(pointer);
  if (!v) {
    v = ajv.compile({ $ref: `https://contract.test/openapi.json#${pointer}` });
    compiled.set(pointer, v);
  }
  return v;
}
const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

describe('bounded conformance run over the whole document', () => {
  it('every role, every operation: no 5xx; status, content type and body as documented', async () => {
    const ids = await t.db.withSystem(async (tx) => {
      const pick = async (sql: string) =>
        ((await tx.query(sql)).rows[0]?.id as string | undefined) ?? '0190aaaa-0000-7000-8000-000000000000';
      return {
        user: await pick('SELECT id FROM users ORDER BY id LIMIT 1'),
        territory: await pick('SELECT id FROM territory ORDER BY id LIMIT 1'),
      };
    });
    const ops = operationsOf(doc).filter(
      (o) => !/\/auth\/(logout|mobile\/revoke)$/.test(o.url) && !(o.url.includes('/realtime/') && o.url.endsWith('/stream')),
    );
    const failures: string[] = [];
    let requests = 0;
    for (const role of ROLES) {
      const session: Session = await t.as(role);
      for (const op of ops) {
        const path = op.url.replace(/:([A-Za-z_]+)/g, (_, p: string) =>
          /territor/i.test(p) ? ids.territory : /user/i.test(p) ? ids.user : '0190aaaa-0000-7000-8000-000000000000',
        );
        const query = op.query
          .filter((q) => q.required)
          .map((q) => `${encodeURIComponent(q.name)}=${encodeURIComponent(String(minimalValue(q.schema, undefined, q.name)))}`)
          .join('&');
        const json = op.bodyType?.includes('json');
        if (op.body && !json) continue; // binary uploads: covered by the storage tests
        const res = await t.req(session, {
          method: op.method as 'GET',
          url: query ? `${path}?${query}` : path,
          headers: { 'idempotency-key': `conformance-${role}-${op.operationId}`, ...(json ? { 'content-type': 'application/json' } : {}) },
          payload: json ? JSON.stringify(minimalValue(op.body!)) : undefined,
        });
        requests++;
        const at = `${role} ${op.method} ${op.url} → ${res.statusCode}`;
        const explicit = Object.keys(
          full.paths[Object.keys(doc.paths).find((p) => p.replace(/\{([^}]+)\}/g, ':$1') === op.url)!][op.method.toLowerCase()].responses,
        );
        // Documented exceptions: a 5xx the operation documents by its exact status (501 reserved contracts, 503 unconfigured webhooks).
        if (res.statusCode >= 500 && !explicit.includes(String(res.statusCode))) {
          failures.push(`${at} not_a_server_error: ${res.body.slice(0, 200)}`);
          continue;
        }
        const docPath = Object.keys(doc.paths).find((p) => p.replace(/\{([^}]+)\}/g, ':$1') === op.url)!;
        const responses: Json = full.paths[docPath][op.method.toLowerCase()].responses;
        const status = String(res.statusCode);
        const key = status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : null;
        if (!key) {
          failures.push(`${at} status_code_conformance: documented ${Object.keys(responses).join(',')}`);
          continue;
        }
        const content: Json | undefined = responses[key].content;
        if (!content || res.statusCode === 204) continue;
        const type = String(res.headers['content-type'] ?? '')
          .split(';')[0]
          .trim();
        if (!(type in content)) {
          failures.push(`${at} content_type_conformance: ${type}, documented ${Object.keys(content).join(',')}`);
          continue;
        }
        if (!type.includes('json')) continue;
        const rawResponse = doc.paths[docPath][op.method.toLowerCase()].responses[key];
        const pointer = rawResponse.$ref
          ? `${rawResponse.$ref.slice(1)}/content/${esc(type)}/schema`
          : `/paths/${esc(docPath)}/${op.method.toLowerCase()}/responses/${key}/content/${esc(type)}/schema`;
        const validate = validatorFor(pointer);
        if (!validate(res.json())) failures.push(`${at} response_schema_conformance: ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(ops.length * 4);
  });
});

/**
 * positive_data_acceptance: bodies that are valid for the document are not refused as invalid (400) by the server.
 * Documented exceptions (rules a schema cannot express, written in the field's description with their code):
 * createMerchant.owner_user_id and createDriver.user_id are required for staff only; a `percent` driver share is at most 100;
 * a recipient message template may use only the known placeholders (400 UNKNOWN_PLACEHOLDER); a recipient's phone, required
 * there, must be a real number (400 INVALID_PHONE, which the Phone pattern cannot tell).
 */
const EXCEPTIONS: Record<string, string[]> = {
  createMerchant: ['owner_user_id'],
  createDriver: ['user_id'],
  createTerritoryTariff: ['driver_share_value'],
  updateTerritoryTariff: ['driver_share_value'],
  updateRecipientMessageSettings: Array.from({ length: 20 }, (_, i) => `templates/${i}/body`),
  previewRecipientMessage: ['body'],
  setRecipientPreference: ['phone'],
};

describe('positive data acceptance', () => {
  it('random bodies valid for the document (fast-check, fixed seed) are never refused with 400 by the server', async () => {
    const check = addFormats(new Ajv2020({ strict: false }));
    const ops = operationsOf(doc).filter((o) => o.body && o.bodyType?.includes('json') && !/\/auth\/(logout|mobile\/revoke)$/.test(o.url));
    const failures: string[] = [];
    let requests = 0;
    for (const role of ['admin', 'customer'] as const) {
      const session = await t.as(role);
      for (const op of ops) {
        const valid = check.compile(op.body!);
        const bodies = fc.sample(validOf(op.body!, [], '', 0), { numRuns: 8, seed: 7 }).filter((b) => valid(b));
        for (const body of bodies) {
          requests++;
          const url = op.url.replace(/:([A-Za-z_]+)/g, '0190aaaa-0000-7000-8000-000000000000');
          const res = await t.req(session, { method: op.method as 'POST', url, payload: body as object });
          if (res.statusCode !== 400) continue;
          const fields: string[] = (res.json().errors ?? []).map((e: { field: string }) => e.field);
          if (fields.length && fields.every((f) => EXCEPTIONS[op.operationId]?.includes(f))) continue;
          failures.push(`${role} ${op.operationId}: ${res.json().code} ${res.json().detail} ← ${JSON.stringify(body).slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(300);
  });
});
