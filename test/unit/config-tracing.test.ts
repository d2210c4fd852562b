// OTEL_* (docs/configuration.md): tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; the
// traces go to that base URL's /v1/traces (the OpenTelemetry specification's rule for the variable
// without a signal); headers are key=value pairs with percent-encoded values; the sampler's argument
// is a share from 0 to 1. A bad value stops start-up naming the variable.

import { ConfigError, loadConfig } from '../../src/config';

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
};

test('unset: off', () => {
  expect(loadConfig({}).tracing).toBeNull();
});

test('set: every lookup traced to {endpoint}/v1/traces, as service reglookup', () => {
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
    tracesUrl: 'http://collector:4318/v1/traces',
    headers: {},
    serviceName: 'reglookup',
    sampleRatio: 1,
  });
});

test('headers, a service name and a share of lookups', () => {
  const t = loadConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com',
    OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc%3D%3D, x-team=ops',
    OTEL_SERVICE_NAME: 'reglookup-eu',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
  }).tracing;
  expect(t).toEqual({
    tracesUrl: 'https://otlp.example.com/v1/traces',
    headers: { 'api-key': 'abc==', 'x-team': 'ops' },
    serviceName: 'reglookup-eu',
    sampleRatio: 0.25,
  });
});

test.each([
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT must be/],
  [
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' },
    /OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL/,
  ],
  [{ OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign' }, /OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/],
  [{ OTEL_EXPORTER_OTLP_HEADERS: 'k=%zz' }, /OTEL_EXPORTER_OTLP_HEADERS: the value of k is not valid percent-encoding/],
  [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
  [{ OTEL_TRACES_SAMPLER_ARG: 'half' }, /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
])('%j stops start-up naming the variable', (env, message) => {
  expect(refusal(env)).toMatch(message);
});
