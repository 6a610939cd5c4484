import { heldActionResultSchema, type HeldActionRequest } from '../../../shared/admin/held-api.js';
import { postJson, readJson } from '../common/admin-api.js';

/** Approves or rejects the held entries of a selection (shared/admin/held-api.ts); resolves to how many. */
export async function actOnHeld(path: string, selection: HeldActionRequest): Promise<number> {
  const response = await postJson(path, selection);
  return (await readJson(response, heldActionResultSchema)).count;
}
