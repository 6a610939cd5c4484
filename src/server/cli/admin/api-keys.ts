import { createApiKey, listApiKeys, revokeApiKey } from '../../api/keys.js';
import { loadConfig } from '../../config.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand, UsageError } from '../program.js';
import { escapeForTerminal } from './audit.js';
import { shortTime, table } from './table.js';
import { API_SCOPES, isApiScope, MAX_API_KEY_EXPIRY_DAYS, MAX_API_KEY_NAME_LENGTH, MAX_API_KEY_RATE_LIMIT, type ApiScope } from '../../../shared/api/scopes.js';
import { UUID_PATTERN } from '../../../shared/admin/waitlist-api.js';

const CLI = { userId: null, email: null, ip: null };

function wholeNumberOption(value: string | undefined, name: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}.`);
  return n;
}

function scopesOption(value: string | undefined): ApiScope[] {
  if (value === undefined) throw new UsageError(`"api-keys create" needs --scopes, some of ${API_SCOPES.join(',')}.`);
  const listed = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = listed.filter((s) => !isApiScope(s));
  if (listed.length === 0 || unknown.length > 0) throw new UsageError(`Unknown scope ${unknown.map((s) => `"${s}"`).join(', ') || '""'}: use ${API_SCOPES.join(', ')}.`);
  return listed as ApiScope[];
}

/** `npm run admin -- api-keys create NAME --scopes … [--expires DAYS] [--rate-limit N] | list | revoke ID`. */
export const apiKeysCommand = defineCommand({
  synopsis: 'api-keys create NAME --scopes entries:read,signups:write[,export] [--expires DAYS] [--rate-limit N] | list | revoke ID',
  help: [
    'Keys of the API at /api/v1 (documented at /api/docs). create prints the key once: only its',
    'hash is stored. --expires: days until it stops working (default: never); --rate-limit: its',
    'requests per minute (default API_RATE_LIMIT). list shows every key with its last use; revoke',
    'stops a key at once.',
  ],
  options: { scopes: { type: 'string' }, expires: { type: 'string' }, 'rate-limit': { type: 'string' } },
  async run({ positionals, options }, io) {
    const [action, ...rest] = positionals;
    if (action === 'create') {
      const name = rest.join(' ').trim();
      if (name === '' || name.length > MAX_API_KEY_NAME_LENGTH) throw new UsageError(`"api-keys create" needs a NAME of 1 to ${MAX_API_KEY_NAME_LENGTH} characters.`);
      const scopes = scopesOption(options.scopes);
      const expiresInDays = wholeNumberOption(options.expires, 'expires', MAX_API_KEY_EXPIRY_DAYS);
      const rateLimit = wholeNumberOption(options['rate-limit'], 'rate-limit', MAX_API_KEY_RATE_LIMIT) ?? loadConfig(io.env).apiKeyRateLimit;
      const { key, token } = await withDatabase(io, (db) => createApiKey(db, { name, scopes, expiresInDays, rateLimit }, CLI));
      io.stdout.write(
        `Created API key ${key.id} (${key.scopes.join(', ')}; ${key.rateLimit} requests a minute; ${key.expiresAt ? `expires ${shortTime(key.expiresAt)}` : 'never expires'}).\n` +
          `Copy it now, it is not shown again:\n\n${token}\n\nUse it as: Authorization: Bearer ${token.slice(0, 6)}…\n`,
      );
      return;
    }
    if (options.scopes !== undefined || options.expires !== undefined || options['rate-limit'] !== undefined) {
      throw new UsageError('--scopes, --expires and --rate-limit are options of "api-keys create".');
    }
    if (action === 'list') {
      if (rest.length > 0) throw new UsageError('"api-keys list" takes no arguments.');
      const keys = await withDatabase(io, listApiKeys);
      if (keys.length === 0) {
        io.stdout.write('No API keys yet. Create one with: npm run admin -- api-keys create NAME --scopes entries:read\n');
        return;
      }
      const state = (k: (typeof keys)[number]) => (k.revokedAt ? `revoked ${shortTime(k.revokedAt)}` : k.expiresAt && k.expiresAt <= new Date().toISOString() ? 'expired' : 'active');
      const rows = keys.map((k) => [k.id, escapeForTerminal(k.name), `${k.prefix}…`, k.scopes.join(','), shortTime(k.createdAt), k.expiresAt ? shortTime(k.expiresAt) : 'never', shortTime(k.lastUsedAt), state(k)]);
      io.stdout.write(`${table(['Id', 'Name', 'Key', 'Scopes', 'Created', 'Expires', 'Last used', 'State'], rows)}\n`);
      return;
    }
    if (action === 'revoke') {
      const id = rest[0];
      if (rest.length !== 1 || !id || !new RegExp(UUID_PATTERN).test(id)) throw new UsageError('"api-keys revoke" needs one key id (see "api-keys list").');
      const revoked = await withDatabase(io, (db) => revokeApiKey(db, id.toLowerCase(), CLI));
      if (!revoked) throw new CliError(`No API key ${id}.`);
      io.stdout.write(`API key ${revoked.id} (${escapeForTerminal(revoked.name)}) is revoked.\n`);
      return;
    }
    throw new UsageError('Use "api-keys create NAME --scopes …", "api-keys list" or "api-keys revoke ID".');
  },
});
