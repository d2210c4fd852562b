// A local RDW Open Data server (Socrata's resource API as RDW serves it): GET
// /resource/m9d7-ebf2.json?kenteken=... (registered vehicles) and /resource/8ys7-d773.json?kenteken=...
// (fuel) answer a JSON array of rows, empty for a plate it does not hold. Rows are written by hand
// after RDW's published field names. Plates ER19xxx answer an error status instead, as the issue's
// test register has it: ER19BAD 400, ER19NFD 404, ER19THR 429 (Retry-After: 7), ER19ERR 500,
// ER19MNT 503, ER19BIG a body that is not JSON. Every request is recorded (path, query, headers).

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Row = Record<string, string>;

export interface FakeRdw {
  readonly url: string;
  readonly requests: { path: string; kenteken: string | null; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export const RDW_VEHICLES: Row[] = [
  {
    kenteken: 'XX999X',
    voertuigsoort: 'Personenauto',
    merk: 'VOLKSWAGEN',
    handelsbenaming: 'GOLF',
    vervaldatum_apk: '20270314',
    datum_tenaamstelling: '20210601',
    inrichting: 'hatchback',
    aantal_zitplaatsen: '5',
    eerste_kleur: 'GRIJS',
    tweede_kleur: 'Niet geregistreerd',
    aantal_cilinders: '4',
    cilinderinhoud: '1498',
    massa_ledig_voertuig: '1255',
    datum_eerste_toelating: '20190315',
    datum_eerste_tenaamstelling_in_nederland: '20190315',
    catalogusprijs: '31990',
    aantal_deuren: '4',
    europese_voertuigcategorie: 'M1',
  },
  // A hybrid: two fuel rows. No doors registered.
  {
    kenteken: 'HB123Z',
    voertuigsoort: 'Personenauto',
    merk: 'TOYOTA',
    handelsbenaming: 'COROLLA',
    inrichting: 'stationwagen',
    aantal_zitplaatsen: '5',
    eerste_kleur: 'WIT',
    cilinderinhoud: '1798',
    datum_eerste_toelating: '20220704',
  },
  // The export's NISSAN row (test/fixtures/rdw-export.ts) in the API's field names: the make again in the trade name.
  {
    kenteken: '85XXXN',
    voertuigsoort: 'Personenauto',
    merk: 'NISSAN',
    handelsbenaming: 'NISSAN MURANO',
    vervaldatum_apk: '20240106',
    inrichting: 'stationwagen',
    aantal_zitplaatsen: '5',
    eerste_kleur: 'ZWART',
    cilinderinhoud: '3498',
    datum_eerste_toelating: '20081206',
    aantal_deuren: '4',
    vervaldatum_apk_dt: '2024-01-06T00:00:00.000',
  },
  // An electric car: no cylinders, its power only in netto_max_vermogen_elektrisch; doors 0 (not registered).
  {
    kenteken: 'EV001X',
    voertuigsoort: 'Personenauto',
    merk: 'TESLA',
    handelsbenaming: 'MODEL 3',
    inrichting: 'sedan',
    aantal_zitplaatsen: '5',
    aantal_deuren: '0',
    datum_eerste_toelating: '20210312',
  },
  // A trailer: no fuel rows, no engine.
  {
    kenteken: 'WX12AB',
    voertuigsoort: 'Aanhangwagen',
    merk: 'HUMBAUR',
    handelsbenaming: 'HA 132513',
    inrichting: 'open wagen',
    datum_eerste_toelating: '20150102',
  },
];

export const RDW_FUEL: Row[] = [
  {
    kenteken: 'XX999X',
    brandstof_volgnummer: '1',
    brandstof_omschrijving: 'Benzine',
    co2_uitstoot_gecombineerd: '112',
    emissiecode_omschrijving: '6',
    nettomaximumvermogen: '110.00',
    uitlaatemissieniveau: 'EURO 6 AG',
  },
  { kenteken: 'HB123Z', brandstof_volgnummer: '2', brandstof_omschrijving: 'Elektriciteit' },
  // Both CO2 figures: NEDC's and WLTP's.
  {
    kenteken: '85XXXN',
    brandstof_volgnummer: '1',
    brandstof_omschrijving: 'Benzine',
    nettomaximumvermogen: '188.00',
    co2_uitstoot_gecombineerd: '265',
    emissie_co2_gecombineerd_wltp: '290',
  },
  {
    kenteken: 'EV001X',
    brandstof_volgnummer: '1',
    brandstof_omschrijving: 'Elektriciteit',
    netto_max_vermogen_elektrisch: '208.00',
  },
  {
    kenteken: 'HB123Z',
    brandstof_volgnummer: '1',
    brandstof_omschrijving: 'Benzine',
    co2_uitstoot_gecombineerd: '101',
  },
];

const ERRORS: Record<string, number> = { ER19BAD: 400, ER19NFD: 404, ER19THR: 429, ER19ERR: 500, ER19MNT: 503 };

export async function startFakeRdw(vehicles: Row[] = RDW_VEHICLES, fuel: Row[] = RDW_FUEL): Promise<FakeRdw> {
  const requests: FakeRdw['requests'] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://localhost');
    const kenteken = u.searchParams.get('kenteken');
    requests.push({ path: u.pathname, kenteken, headers: req.headers });
    const rows =
      u.pathname === '/resource/m9d7-ebf2.json' ? vehicles : u.pathname === '/resource/8ys7-d773.json' ? fuel : null;
    if (rows === null) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"code":"not_found","error":true,"message":"Not found"}');
      return;
    }
    const status = kenteken ? ERRORS[kenteken] : undefined;
    if (status) {
      res
        .writeHead(
          status,
          status === 429
            ? { 'retry-after': '7', 'content-type': 'application/json' }
            : { 'content-type': 'application/json' },
        )
        .end('{"error":true,"message":"failed"}');
      return;
    }
    if (kenteken === 'ER19BIG') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('<html>maintenance</html>');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(rows.filter((r) => r.kenteken === kenteken)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
