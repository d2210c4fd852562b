// Validates an OpenAPI document read from stdin with @seriousme/openapi-schema-validator (an ES
// module, so it runs in its own Node process rather than inside jest) and prints the result as JSON.
import { Validator } from '@seriousme/openapi-schema-validator';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const validator = new Validator();
const res = await validator.validate(JSON.parse(text));
process.stdout.write(
  JSON.stringify({ valid: res.valid, version: validator.version, errors: res.errors ?? null }) + '\n',
);
