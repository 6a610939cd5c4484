import type { AdminRole } from '../../../shared/admin/roles.js';
import { ADMIN_TEAM_PATH, ADMIN_TEAM_ROLE_PATH, teamListSchema, teamMemberSchema, type TeamMember } from '../../../shared/admin/team-api.js';
import { postJson, readJson, request } from '../common/admin-api.js';

/** Every admin with its role (owners only). */
export async function fetchTeam(signal?: AbortSignal): Promise<TeamMember[]> {
  const response = await request(ADMIN_TEAM_PATH, { signal });
  return (await readJson(response, teamListSchema)).admins;
}

/** Gives an admin a role (owners only; the last owner's is refused with 409 last_owner). */
export async function setTeamRole(id: string, role: AdminRole): Promise<TeamMember> {
  const response = await postJson(ADMIN_TEAM_ROLE_PATH, { id, role });
  return readJson(response, teamMemberSchema);
}
