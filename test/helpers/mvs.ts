// Files shaped as Ukraine's Ministry of Internal Affairs publishes its register of vehicle
// registrations on data.gov.ua (docs/data.md, "Ukraine's register"), for the tests of
// `import --format ua-mvs`. The header lines are the real ones of each period, and the rows are
// values published in them, as open projects that read the files quote them:
//   - opencars/operations (README: the Tesla АА9359РС row of 2016, `TESLA  MODEL X` in BRAND beside
//     `MODEL  X`; pkg/portal/operation.go: OPER_NAME repeating its code, DD.MM.YY and DD.MM.YYYY dates);
//   - the schema inventories of mykhailoklimnyk/ua-vehicle-registry-data-quality (2013-2018 lower
//     case and unquoted with YYYY-MM-DD dates; 2019-2025 upper case and quoted, DD.MM.YYYY until
//     2022 and DD.MM.YY from 2023; VIN from 2021; 2026 with no plate, no KOATUU, the operation's code
//     and name fused in one column named `CD.OPER_CODE||'-'||CD.OPERAS`, and POWER_KWT);
//   - test rows of other readers of the same files (the LEXUS АХ1312КК row of 2025, the BMW X6 row
//     of 2026, operation names such as `ПЕРЕРЕЄСТРАЦІЯ ТЗ НА НОВ. ВЛАСН. ПО ДОГОВОРУ УКЛАДЕНОМУ В ТСЦ`).
// Archives are written by Python's zipfile (deflated, as the portal's ZIPs are), not by this project.

import { spawnSync } from 'node:child_process';

/** 2013-2018: lower case, unquoted, no VIN. */
export const HEADER_2013 =
  'person;reg_addr_koatuu;oper_code;oper_name;d_reg;dep_code;dep;brand;model;make_year;color;kind;body;purpose;fuel;capacity;own_weight;total_weight;n_reg_new';
/** 2019-2020: upper case and quoted, still no VIN. */
export const HEADER_2019 =
  '"PERSON";"REG_ADDR_KOATUU";"OPER_CODE";"OPER_NAME";"D_REG";"DEP_CODE";"DEP";"BRAND";"MODEL";"MAKE_YEAR";"COLOR";"KIND";"BODY";"PURPOSE";"FUEL";"CAPACITY";"OWN_WEIGHT";"TOTAL_WEIGHT";"N_REG_NEW"';
/** 2021-2025: VIN after MODEL. */
export const HEADER_2025 =
  '"PERSON";"REG_ADDR_KOATUU";"OPER_CODE";"OPER_NAME";"D_REG";"DEP_CODE";"DEP";"BRAND";"MODEL";"VIN";"MAKE_YEAR";"COLOR";"KIND";"BODY";"PURPOSE";"FUEL";"CAPACITY";"OWN_WEIGHT";"TOTAL_WEIGHT";"N_REG_NEW"';
/** 2026: no plate, no KOATUU, no DEP_CODE; the operation fused; KIND;PURPOSE;BODY; POWER_KWT. */
export const HEADER_2026 = `"PERSON";"CD.OPER_CODE||'-'||CD.OPERAS";"D_REG";"DEP";"BRAND";"MODEL";"VIN";"MAKE_YEAR";"COLOR";"KIND";"PURPOSE";"BODY";"FUEL";"CAPACITY";"POWER_KWT";"OWN_WEIGHT";"TOTAL_WEIGHT"`;

/** A 2016 file: the Tesla's import from abroad (a legal entity's, J), and a BMW whose BRAND is not doubled. */
export const ROWS_2016 = [
  'J;8036600000;70;70 - РЕЄСТРАЦІЯ ТЗ ПРИВЕЗЕНОГО З-ЗА КОРДОНУ ПО ВМД;2016-10-13;8044;Центр 8044;TESLA  MODEL X;MODEL  X;2016;ЧОРНИЙ;ЛЕГКОВИЙ;УНІВЕРСАЛ-B;ЗАГАЛЬНИЙ;ЕЛЕКТРО;;2485;3021;АА9359РС',
  'P;0510137000;40;40 - ВТОРИННА РЕЄСТРАЦІЯ;2016-04-12;1234;ТСЦ 1234;BMW;320;2013;СИНІЙ;ЛЕГКОВИЙ;СЕДАН;ЗАГАЛЬНИЙ;БЕНЗИН;1998;1350;1800;КА0001АА',
  // A row without a plate (about 1 % of a year's rows).
  'P;0510137000;530;530 - ЗНЯТТЯ З ОБЛІКУ;2016-05-02;1234;ТСЦ 1234;ВАЗ  2107;2107;1990;БІЛИЙ;ЛЕГКОВИЙ;СЕДАН;ЗАГАЛЬНИЙ;БЕНЗИН;1450;1030;1430;',
];

/** A 2019 file, fields quoted as its header is: the Tesla changes owner. */
export const ROWS_2019 = [
  '"P";"8036600000";"315";"ПЕРЕРЕЄСТРАЦІЯ ТЗ НА НОВ. ВЛАСН. ПО ДОГОВОРУ УКЛАДЕНОМУ В ТСЦ";"11.05.2019";"12290";"ТСЦ 8045";"TESLA";"MODEL X";"2016";"ЧОРНИЙ";"ЛЕГКОВИЙ";"УНІВЕРСАЛ-B";"ЗАГАЛЬНИЙ";"ЕЛЕКТРО";"";"2485";"3021";"АА9359РС"',
];

/** A 2025 file: the Tesla's newest operation (after the 2019 one), and the LEXUS twice, its rows not in date order. */
export const ROWS_2025 = [
  '"P";"6310138200";"254";"НАЛЕЖНИЙ КОРИСТУВАЧ. РЕЄСТРАЦІЯ";"15.03.25";"10000";"OLD_ДДАІ МВС УКРАЇНИ";"LEXUS";"IS 250";"JTHCK262882026114";"2008";"ЧЕРВОНИЙ";"ЛЕГКОВИЙ";"СЕДАН";"ЗАГАЛЬНИЙ";"БЕНЗИН";"2499";"2075";"2575";"АХ1312КК"',
  '"P";"6310138200";"308";"ПЕРЕРЕЄСТРАЦІЯ НА НОВОГО ВЛАСНИКА";"01.01.25";"10000";"OLD_ДДАІ МВС УКРАЇНИ";"LEXUS";"IS 250";"JTHCK262882026114";"2008";"ЧЕРВОНИЙ";"ЛЕГКОВИЙ";"СЕДАН";"ЗАГАЛЬНИЙ";"БЕНЗИН";"2499";"2075";"2575";"АХ1312КК"',
  '"P";"8036600000";"410";"ЗАМІНА НОМЕРНОГО ЗНАКУ";"02.06.25";"12290";"ТСЦ 8045";"TESLA";"MODEL X";"5YJXCCE40GF010543";"2016";"СІРИЙ";"ЛЕГКОВИЙ";"УНІВЕРСАЛ-B";"ЗАГАЛЬНИЙ";"ЕЛЕКТРО";"";"2485";"3021";"АА9359РС"',
];

/** A 2026 file: no plate column at all. */
export const ROWS_2026 = [
  '"P";"50 - ВТОРИННА РЕЄСТРАЦІЯ ТЗ ЗНЯТОГО З ОБЛІКУ НА НОВОГО ВЛАСНИКА ЗА ДКП УКЛАДЕНОМУ В СГ (TRADE-IN)";"01.01.26";"ТСЦ 5141";"BMW";"X6";"WBAKV210300R24692";"2015";"БІЛИЙ";"ЛЕГКОВИЙ";"ЗАГАЛЬНИЙ";"УНІВЕРСАЛ";"ДИЗЕЛЬНЕ ПАЛИВО";"2993";"";"2140";"3000"',
  '"P";"308 - ПЕРЕРЕЄСТРАЦІЯ НА НОВОГО ВЛАСНИКА";"01.01.26";"ТСЦ 0546";"OPEL";"INSIGNIA";"W0LGT5GM2C1097615";"2012";"СІРИЙ";"ЛЕГКОВИЙ";"ЗАГАЛЬНИЙ";"СЕДАН";"ДИЗЕЛЬНЕ ПАЛИВО";"1956";"162";"1800";"2490"',
];

/** A CSV file's text: its header and rows, CRLF line ends (as Windows tools write them). */
export const csvOf = (header: string, rows: readonly string[]) => [header, ...rows].join('\r\n') + '\r\n';

/**
 * Writes a ZIP at `out` holding `entry` with `text` encoded as `encoding` (Python's codec names:
 * utf-8, utf-8-sig for a BOM, cp1251), deflated, by Python's zipfile. `written`: the entry's MS-DOS
 * date and time (year, month, day, hour, minute, second; zipfile's own default is the local time now),
 * and `utcSeconds` an extended timestamp (extra field 0x5455) beside it.
 */
export function pythonZip(
  out: string,
  entry: string,
  text: string,
  encoding = 'utf-8',
  written?: { dateTime: readonly number[]; utcSeconds?: number },
): void {
  const r = spawnSync(
    'python3',
    [
      '-c',
      `import sys, json, struct, time, zipfile
w = json.loads(sys.argv[4])
info = zipfile.ZipInfo(sys.argv[2], tuple(w['dateTime']) if w else time.localtime()[:6])
info.compress_type = zipfile.ZIP_DEFLATED
if w and 'utcSeconds' in w:
    info.extra = struct.pack('<HHBI', 0x5455, 5, 1, w['utcSeconds'])
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr(info, sys.stdin.buffer.read().decode('utf-8').encode(sys.argv[3]))`,
      out,
      entry,
      encoding,
      JSON.stringify(written ?? null),
    ],
    { input: text, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(r.stderr);
}

/** `text` encoded as `encoding` by Python (Node has no Windows-1251 encoder). */
export function pythonEncode(text: string, encoding: string): Buffer {
  const r = spawnSync(
    'python3',
    [
      '-c',
      `import sys; sys.stdout.buffer.write(sys.stdin.buffer.read().decode('utf-8').encode(sys.argv[1]))`,
      encoding,
    ],
    {
      input: text,
    },
  );
  if (r.status !== 0) throw new Error(String(r.stderr));
  return r.stdout;
}
