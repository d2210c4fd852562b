// The access log's path: never the query string, never anything after the operation segment,
// where a registration number could ride along.

import { loggedPath } from '../../src/app';

test.each([
  ['/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo', '/api/reg.asmx/Check'],
  ['/api/reg.asmx/Check/RG11ABC', '/api/reg.asmx/Check/…'],
  ['/api/reg.asmx', '/api/reg.asmx'],
  ['/healthz', '/healthz'],
  ['/api/reg.asmx?WSDL', '/api/reg.asmx'],
])('%s is logged as %s', (url, logged) => {
  expect(loggedPath(url)).toBe(logged);
});
