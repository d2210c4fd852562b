// A local OpenTelemetry collector's receiving end: OTLP over HTTP, JSON encoding, as the
// specification defines it (POST /v1/traces, an ExportTraceServiceRequest: resourceSpans ->
// scopeSpans -> spans, ids in hex, attributes as key and typed value). It keeps every span it is
// sent, flattened, and every body as received, for a test to search.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error (OTLP's StatusCode). */
  readonly status: number;
  readonly resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to: the base URL, /v1/traces is added by the sender. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Every request body, as text. */
  readonly bodies: string[];
  /** Paths and content types of the requests. */
  readonly requests: { path: string; contentType: string }[];
  close(): Promise<void>;
}

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue ?? '';
}

function attributesOf(list: { key: string; value: AnyValue }[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const a of list ?? []) out[a.key] = valueOf(a.value);
  return out;
}

interface Export {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: { key: string; value: AnyValue }[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const requests: { path: string; contentType: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type'] ?? '') });
      bodies.push(body);
      if (req.method !== 'POST' || req.url !== '/v1/traces') return res.writeHead(404).end();
      const doc = JSON.parse(body) as Export;
      for (const rs of doc.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              attributes: attributesOf(s.attributes),
              status: s.status?.code ?? 0,
              resource,
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
