// The HTML of the help pages (routed by help.ts): the service page listing the operations, a page
// per operation with a test form and the sample messages, and the page for an unknown operation.
// Everything comes from the catalogue and the WSDL; every value written is escaped. One inline
// style sheet, allowed by its hash in the Content-Security-Policy; no script, no external asset;
// the form works without JavaScript (the browser shows the XML answer, as ASMX's test form does).

import { createHash } from 'node:crypto';
import type { Operation } from '../contract/operations';
import type { ContractModel } from '../contract/schema';
import type { Sample } from './samples';
import { escapeAttr } from './xml';

/** Where the pages point, all derived from the service's address (baseUrl() + /api/reg.asmx). */
export interface PageLinks {
  /** The service's absolute URL, as the WSDL's port addresses give it. */
  readonly address: string;
  /** Its path alone: form actions and links back stay on the origin the browser used ('self'). */
  readonly path: string;
  readonly wsdl: string;
  readonly disco: string;
  readonly openapi: string;
}

const STYLE = [
  ':root{color-scheme:light}',
  'body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;background:#fff}',
  'header,main{max-width:60rem;margin:0 auto;padding:0 1rem}',
  'header{border-bottom:3px solid #1d4f91;padding-bottom:.5rem}',
  'h1{color:#1d4f91;font-size:1.8rem;margin:.75rem 0 .25rem}',
  'h2{font-size:1.45rem;margin:1.5rem 0 .5rem}',
  'h3{font-size:1.15rem;margin:1.75rem 0 .5rem}',
  'p{margin:.5rem 0}',
  'a{color:#0b4fa0;overflow-wrap:anywhere}',
  'a:focus-visible,input:focus-visible,button:focus-visible,pre:focus-visible{outline:3px solid #b35c00;outline-offset:2px}',
  'code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9rem}',
  'code{overflow-wrap:anywhere}',
  'pre{background:#f3f5f8;border:1px solid #c5ced9;border-radius:3px;padding:.75rem;overflow-x:auto;margin:.5rem 0 1rem}',
  'ul{padding-left:1.25rem}',
  'li{margin:.35rem 0}',
  '.field{display:grid;grid-template-columns:11rem minmax(0,22rem);gap:.25rem .75rem;align-items:center;margin:.6rem 0}',
  '.hint{grid-column:2;font-size:.875rem;color:#454545}',
  'input{font:inherit;padding:.3rem .4rem;border:1px solid #5f6b78;border-radius:3px;min-width:0}',
  'button{font:inherit;margin:.5rem 0;padding:.4rem 1.4rem;background:#1d4f91;color:#fff;border:0;border-radius:3px;cursor:pointer}',
  '@media (max-width:40rem){.field{grid-template-columns:minmax(0,1fr)}.hint{grid-column:1}h1{font-size:1.5rem}}',
].join('');

/**
 * The Content-Security-Policy of every help page: nothing but this page's own style sheet, forms only to this origin.
 */
export const HELP_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

/** HTML text and attribute values: & < > " ' all escaped. */
function html(s: string): string {
  return escapeAttr(s).replace(/'/g, '&#39;');
}

/** What each parameter means; keyed by parameter name (the operations are the catalogue's). */
const PARAM_HINTS: Readonly<Record<string, string>> = {
  RegistrationNumber: 'As on the plate; case, spaces, hyphens and dots are ignored.',
  state: 'Province or territory: postal abbreviation or full name.',
  State: 'State or territory: postal abbreviation or full name.',
  username: 'Your username.',
  Model: "Optional: the vehicle's make or model; a record that matches neither is not found.",
};

function page(model: ContractModel, title: string, header: string, main: string): string {
  return (
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${html(title)}</title><style>${STYLE}</style></head>\n<body>` +
    `<header><h1>${html(model.serviceName)}</h1>${header}</header>\n<main>${main}</main></body></html>\n`
  );
}

function code(s: string): string {
  return `<code>${html(s)}</code>`;
}

function parameters(op: Operation): string {
  const params = op.params.map((p) => code(p) + (op.required.includes(p) ? '' : ' (optional)')).join(', ');
  return `Parameters: ${params}. Returns ${code(op.result)}.`;
}

/** The service page's line for an operation: country or kind, parameters, result. */
function describe(op: Operation): string {
  return `${html(op.country)}. ${parameters(op)}`;
}

function backLink(links: PageLinks): string {
  return `<p><a href="${html(links.path)}">Click here for a complete list of operations.</a></p>`;
}

/** GET /api/reg.asmx: the operations, each with one line, and the service's descriptions. */
export function servicePage(
  model: ContractModel,
  operations: readonly Operation[],
  namespace: string,
  links: PageLinks,
): string {
  const items = operations
    .map((op) => `<li><a href="?op=${encodeURIComponent(op.name)}">${html(op.name)}</a>: ${describe(op)}</li>`)
    .join('\n');
  const main =
    `<p>The following operations are supported. For a formal definition, please review the <a href="${html(links.wsdl)}">Service Description</a> (WSDL).</p>\n` +
    `<ul>` +
    `<li>Service description (WSDL): <a href="${html(links.wsdl)}">${html(links.wsdl)}</a></li>` +
    `<li>JSON API (OpenAPI document): <a href="${html(links.openapi)}">${html(links.openapi)}</a></li>` +
    `<li>Discovery document (DISCO): <a href="${html(links.disco)}">${html(links.disco)}</a></li>` +
    `</ul>\n` +
    `<p>Namespace ${code(namespace)}. Every operation answers SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST at ${code(links.address)}.</p>\n` +
    `<h2>Operations</h2>\n<ul>\n${items}\n</ul>\n`;
  return page(
    model,
    `${model.serviceName} Web Service`,
    model.serviceDocumentation ? `<p>${html(model.serviceDocumentation)}</p>` : '',
    main,
  );
}

/** What the operation does; `doc` is its wsdl:documentation ("UK vehicle", "USA"). */
function what(op: Operation, doc: string | undefined): string {
  if (op.result === 'UKMOTData') {
    return `Looks up the MOT tests of a UK registration and returns them as ${code('UKMOTData')}: each test with its failure reasons and advisories, the tax date, and extended information.`;
  }
  const state = op.state ? ` and ${code(op.state.param)}` : '';
  return `${html(doc || op.country)}: looks up a vehicle by its registration${state} and returns it as a ${code('Vehicle')}: ${code('vehicleJson')}, the record as JSON text, and ${code('vehicleData')}, its fields.`;
}

function testForm(op: Operation, links: PageLinks): string {
  const fields = op.params
    .map((p) => {
      const id = `param-${p}`;
      const hint = PARAM_HINTS[p];
      const described = hint ? ` aria-describedby="${html(id)}-hint"` : '';
      const label = op.required.includes(p) ? html(p) : `${html(p)} (optional)`;
      return (
        `<div class="field"><label for="${html(id)}">${label}</label>` +
        `<input id="${html(id)}" name="${html(p)}" type="text" autocomplete="off" spellcheck="false"${described}>` +
        (hint ? `<span class="hint" id="${html(id)}-hint">${html(hint)}</span>` : '') +
        `</div>`
      );
    })
    .join('\n');
  return (
    `<h3>Test</h3>\n<p>To test the operation using the HTTP POST protocol, fill in the values and click <strong>Invoke</strong>. The answer is shown as it is sent: XML, or one line naming the error.</p>\n` +
    `<form method="post" action="${html(`${links.path}/${op.name}`)}" accept-charset="utf-8">\n${fields}\n<button type="submit">Invoke</button>\n</form>\n`
  );
}

function sampleSection(s: Sample): string {
  return (
    `<h3 id="${s.id}">${html(s.title)}</h3>\n` +
    `<p>The following is a sample ${html(s.title)} request and response. The placeholders shown need to be replaced with actual values.</p>\n` +
    `<pre id="${s.id}-request" tabindex="0" aria-label="${html(s.title)} request">${html(s.request)}</pre>\n` +
    `<pre id="${s.id}-response" tabindex="0" aria-label="${html(s.title)} response">${html(s.response)}</pre>\n`
  );
}

/** GET /api/reg.asmx?op=NAME: what the operation does, a test form, and its sample messages. */
export function operationPage(
  model: ContractModel,
  op: Operation,
  samples: readonly Sample[],
  links: PageLinks,
): string {
  const doc = model.documentation.get(op.name);
  const main =
    `<h2>${html(op.name)}</h2>\n` +
    `<p>${what(op, doc)}</p>\n<p>${parameters(op)}</p>\n` +
    testForm(op, links) +
    samples.map(sampleSection).join('');
  return page(model, `${model.serviceName} Web Service: ${op.name}`, backLink(links), main);
}

/** The page for ?op= naming no operation. The name asked for is not echoed; a case-insensitive match is offered. */
export function unknownOperationPage(
  model: ContractModel,
  suggestion: Operation | undefined,
  links: PageLinks,
): string {
  const near = suggestion
    ? `<p>Operation names are case-sensitive. Did you mean <a href="?op=${encodeURIComponent(suggestion.name)}">${html(suggestion.name)}</a>?</p>\n`
    : '';
  const main = `<h2>Unknown operation</h2>\n<p>This service has no operation of that name.</p>\n${near}`;
  return page(model, `${model.serviceName} Web Service: unknown operation`, backLink(links), main);
}
