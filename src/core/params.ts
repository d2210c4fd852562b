// The rules every text parameter follows, whoever reads it: a lookup's parameters (service/lookup.ts)
// and a username registered by the operator (accounts/username.ts).

export const MAX_PARAM_CHARS = 256;
// C0, DEL and C1 controls, and the line and paragraph separators: never part of a plate, a state,
// a model or a username, and they would split or corrupt log lines and error messages.
export const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
