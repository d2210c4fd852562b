// Preloaded (node -r) into a served process by a test: records every V8 flag the process sets on
// itself, to the file RECORD_V8_FLAGS names, so that the test sees what the server really did.
const fs = require('node:fs');
const v8 = require('node:v8');
const file = process.env.RECORD_V8_FLAGS;
const set = v8.setFlagsFromString;
v8.setFlagsFromString = function (flags) {
  if (file) fs.appendFileSync(file, `${flags}\n`);
  return set.call(this, flags);
};
