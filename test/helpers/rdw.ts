// RDW's open-data CSV files, written by hand from RDW's published column names (the API's field
// names and the portal's column titles): three vehicles rows, quoted as RFC 4180 writes them, and the
// fuel file that joins them by kenteken.

export const API_HEADER =
  'kenteken,voertuigsoort,merk,handelsbenaming,eerste_kleur,datum_eerste_toelating,cilinderinhoud,aantal_deuren,aantal_zitplaatsen,inrichting';
export const PORTAL_HEADER =
  'Kenteken,Voertuigsoort,Merk,Handelsbenaming,Eerste kleur,Datum eerste toelating,Cilinderinhoud,Aantal deuren,Aantal zitplaatsen,Inrichting';
export const ROWS = [
  'XX999X,Personenauto,VOLKSWAGEN,GOLF,GRIJS,20190315,1498,4,5,hatchback',
  // Quoted: a comma and doubled quotes in the trade name; a line break (CRLF) inside the body style.
  'AB123C,Personenauto,MERCEDES-BENZ,"E 200 ""AVANTGARDE"", LANG",ZWART,20200101,1991,4,5,"sedan\r\nlang"',
  // A trailer: empty fields.
  'WX12AB,Aanhangwagen,HUMBAUR,HA 132513,,20150102,,,,open wagen',
];
export const FUEL = [
  'kenteken,brandstof_volgnummer,brandstof_omschrijving,co2_uitstoot_gecombineerd',
  'AB123C,2,Elektriciteit,',
  'XX999X,1,Benzine,112',
  // The plate's other row, not next to its first.
  'AB123C,1,Benzine,150',
].join('\n');

/** The vehicles file as RDW writes it: CRLF line ends, a BOM unless told not to. */
export const csv = (header: string, bom = true) => `${bom ? '\ufeff' : ''}${header}\r\n${ROWS.join('\r\n')}\r\n`;
