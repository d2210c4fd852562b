// Registration and state normalisation, the same at import and at lookup, so that a plate typed
// any reasonable way finds the record it was imported under.

import type { StateCountry } from '../contract/operations';

const MAX_REGISTRATION_CHARS = 32;

// Cyrillic letters that look like Latin ones (after upper-casing): a Ukrainian or Kazakh plate
// typed on either keyboard must match.
const CYRILLIC_TO_LATIN: Record<string, string> = {
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  У: 'Y',
  Х: 'X',
};
const CYRILLIC_RE = /[АВЕКМНОРСТУХ]/g;
// Separators people type inside plates: any white space, hyphens and dashes, dots, middle dots.
const SEPARATORS_RE = /[\s\-\u2010-\u2015.\u00b7\u2022\u30fb]/g;
// Characters that are never part of a plate and would corrupt logs or XML.
const CONTROL_RE =
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

type Checked = { ok: true; value: string } | { ok: false; reason: string };

/** What a registration and a state both ignore: case, separators; Cyrillic look-alikes read as Latin. */
function fold(s: string): string {
  return s
    .toUpperCase()
    .replace(CYRILLIC_RE, (c) => CYRILLIC_TO_LATIN[c])
    .replace(SEPARATORS_RE, '');
}

/** Registration as typed -> the key it is stored under. */
export function normalizeRegistration(raw: string): Checked {
  if (CONTROL_RE.test(raw)) return { ok: false, reason: 'contains control characters' };
  // Code points are never more than UTF-16 units: count them only when the cheap length is over.
  if (raw.length > MAX_REGISTRATION_CHARS && [...raw].length > MAX_REGISTRATION_CHARS) {
    return { ok: false, reason: `is longer than ${MAX_REGISTRATION_CHARS} characters` };
  }
  const value = fold(raw.normalize('NFKC'));
  if (value === '') return { ok: false, reason: 'holds no letters or digits' };
  return { ok: true, value };
}

type Table = ReadonlyArray<readonly [string, string]>;

const US: Table = [
  ['AL', 'Alabama'],
  ['AK', 'Alaska'],
  ['AZ', 'Arizona'],
  ['AR', 'Arkansas'],
  ['CA', 'California'],
  ['CO', 'Colorado'],
  ['CT', 'Connecticut'],
  ['DE', 'Delaware'],
  ['FL', 'Florida'],
  ['GA', 'Georgia'],
  ['HI', 'Hawaii'],
  ['ID', 'Idaho'],
  ['IL', 'Illinois'],
  ['IN', 'Indiana'],
  ['IA', 'Iowa'],
  ['KS', 'Kansas'],
  ['KY', 'Kentucky'],
  ['LA', 'Louisiana'],
  ['ME', 'Maine'],
  ['MD', 'Maryland'],
  ['MA', 'Massachusetts'],
  ['MI', 'Michigan'],
  ['MN', 'Minnesota'],
  ['MS', 'Mississippi'],
  ['MO', 'Missouri'],
  ['MT', 'Montana'],
  ['NE', 'Nebraska'],
  ['NV', 'Nevada'],
  ['NH', 'New Hampshire'],
  ['NJ', 'New Jersey'],
  ['NM', 'New Mexico'],
  ['NY', 'New York'],
  ['NC', 'North Carolina'],
  ['ND', 'North Dakota'],
  ['OH', 'Ohio'],
  ['OK', 'Oklahoma'],
  ['OR', 'Oregon'],
  ['PA', 'Pennsylvania'],
  ['RI', 'Rhode Island'],
  ['SC', 'South Carolina'],
  ['SD', 'South Dakota'],
  ['TN', 'Tennessee'],
  ['TX', 'Texas'],
  ['UT', 'Utah'],
  ['VT', 'Vermont'],
  ['VA', 'Virginia'],
  ['WA', 'Washington'],
  ['WV', 'West Virginia'],
  ['WI', 'Wisconsin'],
  ['WY', 'Wyoming'],
  ['DC', 'District of Columbia'],
  ['PR', 'Puerto Rico'],
  ['GU', 'Guam'],
  ['VI', 'U.S. Virgin Islands'],
  ['AS', 'American Samoa'],
  ['MP', 'Northern Mariana Islands'],
];

const CA: Table = [
  ['AB', 'Alberta'],
  ['BC', 'British Columbia'],
  ['MB', 'Manitoba'],
  ['NB', 'New Brunswick'],
  ['NL', 'Newfoundland and Labrador'],
  ['NS', 'Nova Scotia'],
  ['NT', 'Northwest Territories'],
  ['NU', 'Nunavut'],
  ['ON', 'Ontario'],
  ['PE', 'Prince Edward Island'],
  ['QC', 'Quebec'],
  ['SK', 'Saskatchewan'],
  ['YT', 'Yukon'],
];

const AU: Table = [
  ['NSW', 'New South Wales'],
  ['VIC', 'Victoria'],
  ['QLD', 'Queensland'],
  ['WA', 'Western Australia'],
  ['SA', 'South Australia'],
  ['TAS', 'Tasmania'],
  ['ACT', 'Australian Capital Territory'],
  ['NT', 'Northern Territory'],
];

const TABLES: Record<StateCountry, Table> = { US, CA, AU };

/**
 * Folds accents, then as a registration is folded (README: case, spaces, hyphens, dots and middle
 * dots ignored, Cyrillic look-alikes to Latin), so 'Québec', 'N.S.W.', ' new  york ' and 'New-York' match.
 */
function stateKey(raw: string): string {
  return fold(raw.normalize('NFD').replace(/\p{M}/gu, ''));
}

const LOOKUP: Record<StateCountry, Map<string, string>> = Object.fromEntries(
  (Object.keys(TABLES) as StateCountry[]).map((country) => {
    const map = new Map<string, string>();
    for (const [abbr, name] of TABLES[country]) {
      map.set(stateKey(abbr), abbr);
      map.set(stateKey(name), abbr);
    }
    if (country === 'US') map.set(stateKey('Virgin Islands'), 'VI');
    return [country, map];
  }),
) as Record<StateCountry, Map<string, string>>;

/** A subdivision, by postal abbreviation or full name in any case, -> its abbreviation. */
export function normalizeState(country: StateCountry, raw: string): Checked {
  const abbr = LOOKUP[country].get(stateKey(raw));
  if (abbr) return { ok: true, value: abbr };
  const examples = TABLES[country]
    .slice(0, 2)
    .map(([a, n]) => `${a} or ${n}`)
    .join(', ');
  return {
    ok: false,
    reason: `is not a known subdivision (use the postal abbreviation or the full name, e.g. ${examples})`,
  };
}
