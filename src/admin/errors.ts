// The admin API's errors: an HTTP status and the JSON API's {"code","message"} body. A refusal of
// the shared management logic (accounts/manage.ts) maps onto one of these.

import { ManageError } from '../accounts/manage';

export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

const MANAGE_STATUS: Record<ManageError['code'], [number, string]> = {
  INVALID_INPUT: [400, 'INVALID_INPUT'],
  NOT_FOUND: [404, 'NOT_FOUND'],
  EXISTS: [409, 'EXISTS'],
  CONFLICT: [422, 'IDEMPOTENCY_KEY_REUSED'],
};

/** An error as the admin API answers it, or null for one it did not expect (logged, answered 500). */
export function adminErrorOf(e: unknown): AdminError | null {
  if (e instanceof AdminError) return e;
  if (e instanceof ManageError) {
    const [status, code] = MANAGE_STATUS[e.code];
    return new AdminError(status, code, e.message);
  }
  return null;
}

export const invalid = (message: string): AdminError => new AdminError(400, 'INVALID_INPUT', message);
