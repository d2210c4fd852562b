// The lookup service on its own (src/service/lookup.ts), with a store and accounts that record what
// they are asked: the README's parameter rules ("Parameters, on every transport", "Limits": at most
// 256 characters, no control characters, a parameter given twice is INVALID_PARAMETER), the error
// table's codes, and the order the README gives a lookup (refusals first; the credit taken only
// when the record is found; a Model that matches neither make nor model is VEHICLE_NOT_FOUND).
// Every expected value is written by hand here.

import type { Accounts, Admitted } from '../../src/accounts/accounts';
import { findOperation, type Operation } from '../../src/contract/operations';
import { LookupError } from '../../src/service/errors';
import { LookupService, paramValue, type CallNotes } from '../../src/service/lookup';
import type { RecordKey, VehicleStore } from '../../src/store/store';
import type { UpstreamChain } from '../../src/service/upstream';
import { refused as thrown } from '../helpers/refused';

const CHECK = findOperation('Check')!;
const USA = findOperation('CheckUSA')!;
const MOT = findOperation('UKMOT')!;
const LOCAL = { address: '127.0.0.1' };

/** A hand-written vehicle and MOT history (the shapes of the README's sample data). */
const FOCUS = JSON.stringify({
  Description: 'FORD FOCUS',
  CarMake: { CurrentTextValue: 'FORD' },
  CarModel: { CurrentTextValue: 'FOCUS' },
});
/** The stand-in upstream's fetch time: 1 November 2026, 10:00:00 UTC. */
const UPSTREAM_FETCHED_AT = Date.UTC(2026, 10, 1, 10, 0, 0);
/**
 * FOCUS as a lookup answers it (docs/calling.md): the record's keys, then AnswerSource and AnswerAsOf; this harness's
 * store keeps no import times, so an imported record's is null.
 */
const FOCUS_ANSWERED =
  '{"Description":"FORD FOCUS","CarMake":{"CurrentTextValue":"FORD"},"CarModel":{"CurrentTextValue":"FOCUS"},' +
  '"AnswerSource":"import","AnswerAsOf":null}';
const MOT_FOCUS = JSON.stringify({ make: 'FORD', model: 'FOCUS', tests: [], taxDate: '2027-01-01' });

async function rejected(p: Promise<unknown>): Promise<LookupError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(LookupError);
    return e as LookupError;
  }
  throw new Error('nothing was thrown');
}

describe('paramValue: one parameter as a transport decoded it', () => {
  test('a plain value is trimmed; an optional one not given, empty or null is undefined', () => {
    expect(paramValue(CHECK, { RegistrationNumber: '  RG11 ABC \t' }, 'RegistrationNumber')).toBe('RG11 ABC');
    expect(paramValue(MOT, {}, 'Model')).toBeUndefined();
    expect(paramValue(MOT, { Model: '   ' }, 'Model')).toBeUndefined();
    expect(paramValue(MOT, { Model: null }, 'Model')).toBeUndefined();
    expect(paramValue(MOT, { Model: ['FOCUS'] }, 'Model')).toBe('FOCUS');
  });

  test('given twice, even the same value, is INVALID_PARAMETER naming the count', () => {
    const e = thrown(() => paramValue(CHECK, { username: ['demo', 'demo'] }, 'username'));
    expect([e.code, e.message]).toEqual(['INVALID_PARAMETER', "Parameter 'username' was given 2 times; give it once"]);
    expect(thrown(() => paramValue(CHECK, { username: ['a', 'b', 'c'] }, 'username')).message).toBe(
      "Parameter 'username' was given 3 times; give it once",
    );
  });

  test('an element with attributes gives its text ($value); nested elements are refused', () => {
    expect(paramValue(CHECK, { RegistrationNumber: { $value: ' RG11ABC ' } }, 'RegistrationNumber')).toBe('RG11ABC');
    expect(paramValue(CHECK, { RegistrationNumber: { $value: 12345 } }, 'RegistrationNumber')).toBe('12345');
    for (const nested of [{ inner: 'x' }, { $value: { a: 1 } }, { $value: null }]) {
      const e = thrown(() => paramValue(CHECK, { RegistrationNumber: nested }, 'RegistrationNumber'));
      expect([e.code, e.message]).toEqual([
        'INVALID_PARAMETER',
        "Parameter 'RegistrationNumber' must be text, not nested elements",
      ]);
    }
    expect(paramValue(CHECK, { RegistrationNumber: 42 }, 'RegistrationNumber')).toBe('42');
  });

  test('a required parameter missing or empty is MISSING_PARAMETER, saying which and for what', () => {
    const missing = thrown(() => paramValue(CHECK, { username: 'demo' }, 'RegistrationNumber'));
    expect([missing.code, missing.message]).toEqual([
      'MISSING_PARAMETER',
      "Missing required parameter 'RegistrationNumber' for Check",
    ]);
    expect(thrown(() => paramValue(CHECK, { RegistrationNumber: null }, 'RegistrationNumber')).message).toBe(
      "Missing required parameter 'RegistrationNumber' for Check",
    );
    const empty = thrown(() => paramValue(CHECK, { RegistrationNumber: ' ' }, 'RegistrationNumber'));
    expect([empty.code, empty.message]).toEqual([
      'MISSING_PARAMETER',
      "Empty required parameter 'RegistrationNumber' for Check",
    ]);
  });

  test('over SOAP, a name in the wrong case is named, with the rule (README: <state> for CheckUSA)', () => {
    const e = thrown(() => paramValue(USA, { RegistrationNumber: '7ABC123', state: 'CA', username: 'demo' }, 'State'));
    expect(e.code).toBe('MISSING_PARAMETER');
    expect(e.message).toBe(
      "Missing required parameter 'State' for CheckUSA (got 'state'; parameter names are case-sensitive in SOAP)",
    );
    // The parameter itself is not its own near miss.
    expect(thrown(() => paramValue(USA, { State: '' }, 'State')).message).toBe(
      "Empty required parameter 'State' for CheckUSA",
    );
  });

  test('at most 256 characters, counted as characters (README, Limits)', () => {
    expect(paramValue(MOT, { Model: 'M'.repeat(256) }, 'Model')).toBe('M'.repeat(256));
    const e = thrown(() => paramValue(MOT, { Model: 'M'.repeat(257) }, 'Model'));
    expect([e.code, e.message]).toEqual(['INVALID_PARAMETER', "Parameter 'Model' is longer than 256 characters"]);
    // 256 characters outside the BMP are 512 UTF-16 units: still 256 characters.
    expect(paramValue(MOT, { Model: '😀'.repeat(256) }, 'Model')).toBe('😀'.repeat(256));
    expect(thrown(() => paramValue(MOT, { Model: '😀'.repeat(257) }, 'Model')).code).toBe('INVALID_PARAMETER');
  });

  test('control characters (C0, DEL, C1, U+2028, U+2029) are INVALID_PARAMETER; their neighbours are not', () => {
    for (const c of ['\u0000', '\u0001', '\u001f', '\u007f', '\u0080', '\u009f', '\u2028', '\u2029']) {
      const e = thrown(() => paramValue(MOT, { Model: `A${c}B` }, 'Model'));
      expect([e.code, e.message]).toEqual(['INVALID_PARAMETER', "Parameter 'Model' contains control characters"]);
    }
    for (const c of [' ', '~', '\u00a0', '\u00a1', '\u2027', '\u202a'])
      expect(paramValue(MOT, { Model: `A${c}B` }, 'Model')).toBe(`A${c}B`);
  });
});

interface Calls {
  gets: RecordKey[];
  admits: string[];
  charges: string[];
  records: Array<[string, string, boolean]>;
  /** With oneStep: the keys the accounts read and charged for in one step (as PostgreSQL's chargeFound does). */
  finds?: RecordKey[];
  /** With an upstream: the keys it was asked. */
  upstream?: RecordKey[];
}

interface HarnessOptions {
  sandbox?: boolean;
  /** The accounts read and charge in one step (a metered caller on PostgreSQL): findCharged answers. */
  oneStep?: boolean;
  /** An upstream chain that answers Check with these payloads. */
  upstream?: Record<string, string>;
}

function harness(
  records: Record<string, string>,
  options: HarnessOptions = {},
): { service: LookupService; calls: Calls } {
  const calls: Calls = { gets: [], admits: [], charges: [], records: [] };
  const payloadAt = (key: RecordKey) => records[`${key.operation}/${key.registration}/${key.state}`];
  const store = {
    async get(key: RecordKey) {
      calls.gets.push(key);
      const payload = payloadAt(key);
      return payload === undefined ? null : { payload };
    },
  } as unknown as VehicleStore;
  if (options.oneStep) calls.finds = [];
  const accounts = {
    async admit(username: string): Promise<Admitted> {
      calls.admits.push(username);
      return { username, key: username, account: null };
    },
    async findCharged(who: Admitted, key: RecordKey) {
      if (!calls.finds) return undefined;
      calls.finds.push(key);
      const payload = payloadAt(key);
      if (payload === undefined) return null;
      calls.charges.push(who.username);
      return { payload };
    },
    async charge(who: Admitted) {
      calls.charges.push(who.username);
    },
    record(who: Admitted, operation: string, found: boolean) {
      calls.records.push([who.username, operation, found]);
    },
    creditsForFetch: () => null,
  } as unknown as Accounts;
  let upstream: UpstreamChain | undefined;
  if (options.upstream) {
    const answers = options.upstream;
    calls.upstream = [];
    upstream = {
      answers: (operation: string) => operation === 'Check',
      async lookup(_op: Operation, key: RecordKey) {
        calls.upstream?.push(key);
        return { payload: answers[key.registration] ?? null, source: 'dvla', fetchedAt: UPSTREAM_FETCHED_AT };
      },
    } as unknown as UpstreamChain;
  }
  return { service: new LookupService(store, accounts, { sandbox: options.sandbox, upstream }), calls };
}

describe('LookupService.lookup', () => {
  const records = {
    'Check/RG11ABC/': FOCUS,
    'CheckUSA/7ABC123/CA': FOCUS,
    'UKMOT/RG11ABC/': MOT_FOCUS,
  };

  test('a found vehicle: the store asked with the normalised key, the credit taken, the lookup counted as found', async () => {
    const { service, calls } = harness(records);
    const notes: CallNotes = {};
    const r = await service.lookup(CHECK, { RegistrationNumber: 'rg11 abc', username: ' demo ' }, LOCAL, notes);
    expect(r).toEqual({ kind: 'Vehicle', payload: FOCUS_ANSWERED, source: 'import', asOf: null });
    // The access log's source: an imported record answered (docs/operating.md).
    expect(notes).toEqual({ username: 'demo', source: 'store' });
    expect(calls).toEqual({
      gets: [{ operation: 'Check', registration: 'RG11ABC', state: '' }],
      admits: ['demo'],
      charges: ['demo'],
      records: [['demo', 'Check', true]],
    });
  });

  test('a state given by its full name is looked up by its abbreviation (README: State=CA or California)', async () => {
    const { service, calls } = harness(records);
    const r = await service.lookup(
      USA,
      { RegistrationNumber: '7ABC 123', State: 'California', username: 'demo' },
      LOCAL,
    );
    expect(r.payload).toBe(FOCUS_ANSWERED);
    expect(calls.gets).toEqual([{ operation: 'CheckUSA', registration: '7ABC123', state: 'CA' }]);
  });

  test('not found: VEHICLE_NOT_FOUND as the README shows it; counted as not found, no credit taken', async () => {
    const { service, calls } = harness(records);
    const e = await rejected(service.lookup(CHECK, { RegistrationNumber: 'ZZ99ZZZ', username: 'demo' }, LOCAL));
    expect([e.code, e.message]).toEqual([
      'VEHICLE_NOT_FOUND',
      "No vehicle found for registration 'ZZ99ZZZ' (United Kingdom)",
    ]);
    expect(calls.charges).toEqual([]);
    expect(calls.records).toEqual([['demo', 'Check', false]]);
    // With a state, the message names it too (the WSDL documents CheckUSA as "USA").
    const s = await rejected(
      service.lookup(USA, { RegistrationNumber: '7ABC123', State: 'NY', username: 'demo' }, LOCAL),
    );
    expect([s.code, s.message]).toEqual(['VEHICLE_NOT_FOUND', "No vehicle found for registration '7ABC123' (USA, NY)"]);
  });

  test('UKMOT with a Model that matches neither make nor model: VEHICLE_NOT_FOUND, no credit taken', async () => {
    const { service, calls } = harness(records);
    expect(
      (await service.lookup(MOT, { RegistrationNumber: 'RG11ABC', username: 'demo', Model: 'focus' }, LOCAL)).payload,
    ).toBe(MOT_FOCUS);
    expect(
      (await service.lookup(MOT, { RegistrationNumber: 'RG11ABC', username: 'demo', Model: 'Ford' }, LOCAL)).payload,
    ).toBe(MOT_FOCUS);
    expect(calls.charges).toEqual(['demo', 'demo']);
    const e = await rejected(
      service.lookup(MOT, { RegistrationNumber: 'RG11ABC', username: 'demo', Model: 'CORSA' }, LOCAL),
    );
    expect(e.code).toBe('VEHICLE_NOT_FOUND');
    expect(e.message.startsWith("No vehicle found for registration 'RG11ABC' with model 'CORSA' (United Kingdom")).toBe(
      true,
    );
    expect(calls.charges).toEqual(['demo', 'demo']);
    expect(calls.records).toEqual([
      ['demo', 'UKMOT', true],
      ['demo', 'UKMOT', true],
      ['demo', 'UKMOT', false],
    ]);
  });

  test('a Model given to an operation that does not take one changes nothing, whatever the record holds', async () => {
    // A vehicle of one's own data may carry fields named like the MOT history's make and model.
    const own = JSON.stringify({ Description: 'FORD FOCUS', make: 'FORD', model: 'FOCUS' });
    const { service, calls } = harness({ ...records, 'Check/OWN1/': own });
    expect(
      (await service.lookup(CHECK, { RegistrationNumber: 'RG11ABC', username: 'demo', Model: 'CORSA' }, LOCAL)).payload,
    ).toBe(FOCUS_ANSWERED);
    expect(
      (await service.lookup(CHECK, { RegistrationNumber: 'OWN1', username: 'demo', Model: 'CORSA' }, LOCAL)).payload,
    ).toBe('{"Description":"FORD FOCUS","make":"FORD","model":"FOCUS","AnswerSource":"import","AnswerAsOf":null}');
    expect(calls.records).toEqual([
      ['demo', 'Check', true],
      ['demo', 'Check', true],
    ]);
  });

  test('UKMOT without a Model is found as it is', async () => {
    const { service, calls } = harness(records);
    expect(await service.lookup(MOT, { RegistrationNumber: 'RG11ABC', username: 'demo' }, LOCAL)).toEqual({
      kind: 'UKMOTData',
      payload: MOT_FOCUS,
      source: 'import',
      asOf: null,
    });
    expect(calls.charges).toEqual(['demo']);
  });

  test('refusals come before the accounts and the store are asked', async () => {
    const { service, calls } = harness(records);
    const reg = await rejected(service.lookup(CHECK, { RegistrationNumber: 'A'.repeat(33), username: 'demo' }, LOCAL));
    expect(reg.code).toBe('INVALID_PARAMETER');
    expect(reg.message.startsWith(`RegistrationNumber '${'A'.repeat(33)}' `)).toBe(true);
    const st = await rejected(
      service.lookup(USA, { RegistrationNumber: '7ABC123', State: 'Narnia', username: 'demo' }, LOCAL),
    );
    expect(st.code).toBe('INVALID_PARAMETER');
    expect(st.message.startsWith("State 'Narnia' ")).toBe(true);
    const user = await rejected(service.lookup(CHECK, { RegistrationNumber: 'RG11ABC' }, LOCAL));
    expect([user.code, user.message]).toEqual(['MISSING_PARAMETER', "Missing required parameter 'username' for Check"]);
    expect(calls).toEqual({ gets: [], admits: [], charges: [], records: [] });
  });

  test('the username is noted for the access log even when the lookup then fails', async () => {
    const { service } = harness(records);
    const notes: CallNotes = {};
    await rejected(service.lookup(CHECK, { RegistrationNumber: 'A'.repeat(33), username: 'carol' }, LOCAL, notes));
    expect(notes).toEqual({ username: 'carol' });
  });

  test('the sandbox plates are ordinary registrations unless SANDBOX=on (README, Sandbox)', async () => {
    const off = harness(records);
    const e = await rejected(off.service.lookup(CHECK, { RegistrationNumber: 'AA19AAA', username: 'demo' }, LOCAL));
    expect(e.code).toBe('VEHICLE_NOT_FOUND');
    expect(off.calls.gets).toEqual([{ operation: 'Check', registration: 'AA19AAA', state: '' }]);
    const explicitOff = harness(records, { sandbox: false });
    expect(
      (await rejected(explicitOff.service.lookup(CHECK, { RegistrationNumber: 'AA19AAA', username: 'demo' }, LOCAL)))
        .code,
    ).toBe('VEHICLE_NOT_FOUND');
  });

  test('with SANDBOX=on, AA19AAA answers without the store or the accounts, and the log marks it', async () => {
    const { service, calls } = harness(records, { sandbox: true });
    const notes: CallNotes = {};
    const r = await service.lookup(CHECK, { RegistrationNumber: 'aa19 aaa', username: 'demo' }, LOCAL, notes);
    expect(r.kind).toBe('Vehicle');
    expect(JSON.parse(r.payload).Description).toContain('SANDBOX TESTCAR');
    expect(notes).toEqual({ username: 'demo', sandbox: true });
    expect(calls).toEqual({ gets: [], admits: [], charges: [], records: [] });
    // Other plates still go to the store, and are not marked.
    const other: CallNotes = {};
    await service.lookup(CHECK, { RegistrationNumber: 'RG11ABC', username: 'demo' }, LOCAL, other);
    expect(other).toEqual({ username: 'demo', source: 'store' });
    // UKMOT's sandbox answer is an MOT history, with the Model checked as for a real one.
    const mot = await service.lookup(MOT, { RegistrationNumber: 'AA19AAA', username: 'demo' }, LOCAL);
    expect(mot.kind).toBe('UKMOTData');
  });

  test('with SANDBOX=on, UKMOT AA19AAA takes its Model as a real history does (README: SANDBOX TESTCAR)', async () => {
    const { service, calls } = harness(records, { sandbox: true });
    expect(
      (await service.lookup(MOT, { RegistrationNumber: 'AA19AAA', username: 'demo', Model: 'testcar' }, LOCAL)).kind,
    ).toBe('UKMOTData');
    expect(
      (await service.lookup(MOT, { RegistrationNumber: 'AA19AAA', username: 'demo', Model: 'Sandbox' }, LOCAL)).kind,
    ).toBe('UKMOTData');
    const e = await rejected(
      service.lookup(MOT, { RegistrationNumber: 'AA19AAA', username: 'demo', Model: 'CORSA' }, LOCAL),
    );
    expect(e.code).toBe('VEHICLE_NOT_FOUND');
    expect(e.message).toContain("with model 'CORSA'");
    expect(calls).toEqual({ gets: [], admits: [], charges: [], records: [] });
  });

  test('no notes object: the lookup still answers', async () => {
    const { service } = harness(records, { sandbox: true });
    expect((await service.lookup(CHECK, { RegistrationNumber: 'AA19AAA', username: 'demo' }, LOCAL)).kind).toBe(
      'Vehicle',
    );
    expect((await service.lookup(CHECK, { RegistrationNumber: 'RG11ABC', username: 'demo' }, LOCAL)).kind).toBe(
      'Vehicle',
    );
  });
});

describe('LookupService.lookup where the accounts read and charge in one step (a metered caller on PostgreSQL)', () => {
  const records = { 'Check/RG11ABC/': FOCUS, 'UKMOT/RG11ABC/': MOT_FOCUS };
  const KEY = { operation: 'Check', registration: 'RG11ABC', state: '' };

  test('found: one step reads and charges; the store is not asked again and no second charge is taken', async () => {
    const { service, calls } = harness(records, { oneStep: true });
    expect(await service.lookup(CHECK, { RegistrationNumber: 'rg11 abc', username: 'demo' }, LOCAL)).toEqual({
      kind: 'Vehicle',
      payload: FOCUS_ANSWERED,
      source: 'import',
      asOf: null,
    });
    expect(calls).toEqual({
      gets: [],
      finds: [KEY],
      admits: ['demo'],
      charges: ['demo'],
      records: [['demo', 'Check', true]],
    });
  });

  test('not in the store: VEHICLE_NOT_FOUND without a charge, the store not asked a second time', async () => {
    const { service, calls } = harness(records, { oneStep: true });
    expect(
      (await rejected(service.lookup(CHECK, { RegistrationNumber: 'ZZ99ZZZ', username: 'demo' }, LOCAL))).code,
    ).toBe('VEHICLE_NOT_FOUND');
    expect(calls).toEqual({
      gets: [],
      finds: [{ operation: 'Check', registration: 'ZZ99ZZZ', state: '' }],
      admits: ['demo'],
      charges: [],
      records: [['demo', 'Check', false]],
    });
  });

  test('not in the store but found upstream: the upstream answers and its charge is taken once, after it', async () => {
    const upstreamFocus = JSON.stringify({ Description: 'FORD FOCUS (upstream)' });
    const { service, calls } = harness(records, { oneStep: true, upstream: { UP1: upstreamFocus } });
    const notes: CallNotes = {};
    // A fresh upstream answer: its provider, as of its fetch (here 2026-11-01T10:00:00Z).
    expect((await service.lookup(CHECK, { RegistrationNumber: 'UP1', username: 'demo' }, LOCAL, notes)).payload).toBe(
      '{"Description":"FORD FOCUS (upstream)","AnswerSource":"dvla","AnswerAsOf":"2026-11-01T10:00:00Z"}',
    );
    expect(notes.source).toBe('dvla');
    const key = { operation: 'Check', registration: 'UP1', state: '' };
    expect(calls).toEqual({
      gets: [],
      finds: [key],
      upstream: [key],
      admits: ['demo'],
      charges: ['demo'],
      records: [['demo', 'Check', true]],
    });
    // Found by neither: nothing charged.
    expect((await rejected(service.lookup(CHECK, { RegistrationNumber: 'UP2', username: 'demo' }, LOCAL))).code).toBe(
      'VEHICLE_NOT_FOUND',
    );
    expect(calls.charges).toEqual(['demo']);
  });

  test('UKMOT with a Model: the record is read first and charged only when the model matches (no one step)', async () => {
    const { service, calls } = harness(records, { oneStep: true });
    expect(
      (await rejected(service.lookup(MOT, { RegistrationNumber: 'RG11ABC', username: 'demo', Model: 'CORSA' }, LOCAL)))
        .code,
    ).toBe('VEHICLE_NOT_FOUND');
    expect(
      (await service.lookup(MOT, { RegistrationNumber: 'RG11ABC', username: 'demo', Model: 'focus' }, LOCAL)).payload,
    ).toBe(MOT_FOCUS);
    const mot = { operation: 'UKMOT', registration: 'RG11ABC', state: '' };
    expect(calls).toEqual({
      gets: [mot, mot],
      finds: [],
      admits: ['demo', 'demo'],
      charges: ['demo'],
      records: [
        ['demo', 'UKMOT', false],
        ['demo', 'UKMOT', true],
      ],
    });
    // Without a Model it is one step like any other.
    expect((await service.lookup(MOT, { RegistrationNumber: 'RG11ABC', username: 'demo' }, LOCAL)).payload).toBe(
      MOT_FOCUS,
    );
    expect(calls.finds).toEqual([mot]);
    expect(calls.charges).toEqual(['demo', 'demo']);
  });
});

export type { Operation };
