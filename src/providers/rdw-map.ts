// RDW Open Data (the Dutch vehicle register) -> a CheckNetherlands `vehicle` record (docs/data.md).
// One row of the registered-vehicles data set (m9d7-ebf2, "Gekentekende_voertuigen") and the rows
// of the fuel data set (8ys7-d773, "Gekentekende_voertuigen_brandstof") for the same plate, by the
// API's field names. Pure: the rdw provider and `reglookup import --format rdw` both map through
// here, so a plate reads the same whichever way it came. What RDW does not hold (transmission,
// immobiliser, driver side, ABI code, manufacture years) is left out, which an answer writes as an
// empty (nil) element; the rows themselves are kept whole under `rdw` and `rdwFuel`.

/** An RDW row: field name -> value as RDW gives it (the API gives every value as text). */
export type RdwRow = Readonly<Record<string, unknown>>;

type Json = Record<string, unknown>;

/** Values RDW writes where a field has no value (e.g. tweede_kleur). */
const NO_VALUE = new Set(['', 'N.V.T.', 'NIET GEREGISTREERD', 'ONBEKEND']);

/** A field's text, or undefined when RDW gives none. */
function rdwText(row: RdwRow, field: string): string | undefined {
  const v = row[field];
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return NO_VALUE.has(t.toUpperCase()) ? undefined : t;
}

/** A whole number (RDW writes "1598", sometimes "1598.0"), or undefined. */
function rdwWhole(row: RdwRow, field: string): number | undefined {
  const t = rdwText(row, field);
  if (t === undefined || !/^\d{1,9}(\.0+)?$/.test(t)) return undefined;
  return Number.parseInt(t, 10);
}

/** A count RDW writes as 0 where none is registered (aantal_deuren of a camper): left out then. */
function rdwCount(row: RdwRow, field: string): number | undefined {
  const n = rdwWhole(row, field);
  return n === 0 ? undefined : n;
}

const YMD_RE = /^(\d{4})(\d{2})(\d{2})$/;
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:T.*)?$/;
/** The bulk export's `... DT` columns: month first, with a time (`07/02/2023 12:00:00 AM`). */
const EXPORT_RE = /^(\d{2})\/(\d{2})\/(\d{4})(?: \d{1,2}:\d{2}(?::\d{2})?(?: ?[AP]M)?)?$/i;

/** A date as RDW writes it, as YYYY-MM-DD; undefined for another form or an impossible month or day. */
function dateOf(t: string): string | undefined {
  const ymd = YMD_RE.exec(t) ?? ISO_RE.exec(t);
  const mdy = ymd ? null : EXPORT_RE.exec(t);
  const [y, mo, d] = ymd ? [ymd[1], ymd[2], ymd[3]] : mdy ? [mdy[3], mdy[1], mdy[2]] : [];
  if (y === undefined || Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31) return undefined;
  return `${y}-${mo}-${d}`;
}

/**
 * An RDW date field as YYYY-MM-DD, or undefined: the field itself (YYYYMMDD in the API and the
 * export), else its `_dt` twin (the API's `YYYY-MM-DDT...`, the export's month-first `... DT`).
 */
function rdwDate(row: RdwRow, field: string): string | undefined {
  for (const name of [field, `${field}_dt`]) {
    const t = rdwText(row, name);
    const date = t === undefined ? undefined : dateOf(t);
    if (date !== undefined) return date;
  }
  return undefined;
}

/** The trade name without the make RDW sometimes repeats in it (NISSAN, "NISSAN MURANO": "MURANO"). */
function modelOf(make: string | undefined, tradeName: string | undefined): string | undefined {
  if (make === undefined || tradeName === undefined) return tradeName;
  const prefix = `${make.toUpperCase()} `;
  const rest = tradeName.toUpperCase().startsWith(prefix) ? tradeName.slice(prefix.length).trim() : '';
  return rest === '' ? tradeName : rest;
}

const composite = (value: number | null, text: string) => ({ CurrentValue: value, CurrentTextValue: text });

/**
 * The record's fields that come from the registered-vehicles row, then the row itself under `rdw` (in the order an
 * answer's vehicleJson shows them).
 */
export function mapRdwVehicle(row: RdwRow): Json {
  const out: Json = {};
  const make = rdwText(row, 'merk');
  const model = modelOf(make, rdwText(row, 'handelsbenaming'));
  const cc = rdwWhole(row, 'cilinderinhoud');
  const firstAdmission = rdwDate(row, 'datum_eerste_toelating');
  const named = model !== undefined && model.toUpperCase() !== make?.toUpperCase() ? model : undefined;
  const description = [make, named, cc !== undefined ? `${cc}cc` : undefined].filter((x) => x !== undefined).join(' ');
  if (description !== '') out.Description = description;
  if (firstAdmission !== undefined) out.RegistrationYear = Number(firstAdmission.slice(0, 4));
  if (make !== undefined) out.CarMake = { CurrentTextValue: make };
  if (model !== undefined) out.CarModel = { CurrentTextValue: model };
  const body = rdwText(row, 'inrichting');
  if (body !== undefined) out.BodyStyle = composite(null, body);
  if (cc !== undefined) out.EngineSize = composite(cc, `${cc}cc`);
  const doors = rdwCount(row, 'aantal_deuren');
  if (doors !== undefined) out.NumberOfDoors = composite(doors, String(doors));
  if (make !== undefined) out.MakeDescription = composite(null, make);
  if (model !== undefined) out.ModelDescription = composite(null, model);
  const seats = rdwCount(row, 'aantal_zitplaatsen');
  if (seats !== undefined) out.NumberOfSeats = composite(seats, String(seats));
  const extra: [string, string | number | undefined][] = [
    ['Colour', rdwText(row, 'eerste_kleur')],
    ['SecondColour', rdwText(row, 'tweede_kleur')],
    ['VehicleType', rdwText(row, 'voertuigsoort')],
    ['FirstRegistrationDate', firstAdmission],
    ['FirstRegistrationDateNL', rdwDate(row, 'datum_eerste_tenaamstelling_in_nederland')],
    ['MotExpiryDate', rdwDate(row, 'vervaldatum_apk')],
    ['ListPrice', rdwWhole(row, 'catalogusprijs')],
    ['EuropeanVehicleCategory', rdwText(row, 'europese_voertuigcategorie')],
    ['Cylinders', rdwWhole(row, 'aantal_cilinders')],
    ['MassEmpty', rdwWhole(row, 'massa_ledig_voertuig')],
  ];
  for (const [key, value] of extra) if (value !== undefined) out[key] = value;
  out.rdw = row;
  return out;
}

/**
 * The record's fields that come from the fuel rows (all the plate's rows, in brandstof_volgnummer
 * order: a hybrid has two), then the rows themselves under `rdwFuel`. They follow the vehicle's
 * fields in the record, so that an import can join them on as text (data/rdw.ts).
 */
export function mapRdwFuel(rows: readonly RdwRow[]): Json {
  const sorted =
    rows.length < 2
      ? rows
      : [...rows].sort(
          (a, b) => (rdwWhole(a, 'brandstof_volgnummer') ?? 0) - (rdwWhole(b, 'brandstof_volgnummer') ?? 0),
        );
  const out: Json = {};
  // The first value a row holds, in fuel-number order (a bulk import maps millions: no arrays made per field).
  const first = <T>(get: (r: RdwRow) => T | undefined): T | undefined => {
    for (const r of sorted) {
      const v = get(r);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  let fuels = '';
  for (const r of sorted) {
    const f = rdwText(r, 'brandstof_omschrijving');
    if (f !== undefined) fuels = fuels === '' ? f : `${fuels}/${f}`;
  }
  if (fuels !== '') out.FuelType = composite(null, fuels);
  // WLTP and NEDC figures are not comparable: WLTP when RDW has it, NEDC otherwise, and which one it is.
  const wltp = first((r) => rdwWhole(r, 'emissie_co2_gecombineerd_wltp'));
  const co2 = wltp ?? first((r) => rdwWhole(r, 'co2_uitstoot_gecombineerd'));
  if (co2 !== undefined) {
    out.Co2Emissions = co2;
    out.Co2TestCycle = wltp !== undefined ? 'WLTP' : 'NEDC';
  }
  const emission = first((r) => rdwText(r, 'uitlaatemissieniveau') ?? rdwText(r, 'emissiecode_omschrijving'));
  if (emission !== undefined) out.EmissionStandard = emission;
  // An electric vehicle's power is in netto_max_vermogen_elektrisch; nettomaximumvermogen is empty.
  const power = first((r) => rdwText(r, 'nettomaximumvermogen') ?? rdwText(r, 'netto_max_vermogen_elektrisch'));
  if (power !== undefined) out.PowerKw = power;
  out.rdwFuel = sorted;
  return out;
}

/** A CheckNetherlands vehicle record from the registered-vehicles row and, when known, the plate's fuel rows. */
export function mapRdw(row: RdwRow, fuel?: readonly RdwRow[]): Json {
  return fuel === undefined ? mapRdwVehicle(row) : { ...mapRdwVehicle(row), ...mapRdwFuel(fuel) };
}

/**
 * A column title of RDW's portal export ("Datum eerste toelating", "Vervaldatum APK") as the API
 * names the field (datum_eerste_toelating, vervaldatum_apk); an API name is left as it is.
 */
export function rdwFieldName(title: string): string {
  return title
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}
