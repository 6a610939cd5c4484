import { loadSecretBox } from '../../auth/secret-rotation.js';
import { loadConfig } from '../../config.js';
import { HttpError } from '../../http/errors.js';
import { listEndpoints, toEndpointView } from '../../webhooks/endpoints.js';
import { createWebhookEndpoint, removeWebhookEndpoint, rotateWebhookSecret, setWebhookEnabled, type ManageDeps, type WebhookActor } from '../../webhooks/manage.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../../shared/admin/webhooks-api.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand, UsageError, type CliIo } from '../program.js';
import { escapeForTerminal } from './audit.js';
import { shortTime, table } from './table.js';

const CLI_ACTOR: WebhookActor = { email: null, id: null, ip: null, by: 'cli' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseEvents(value: string | undefined): WebhookEventType[] | undefined {
  if (value === undefined) return undefined;
  const events = value.split(',').map((e) => e.trim()).filter((e) => e !== '');
  const unknown = events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) throw new UsageError(`Unknown event ${unknown.map((e) => `"${e}"`).join(', ')}; the events are ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
  return events as WebhookEventType[];
}

function oneId(positionals: string[], action: string): string {
  const id = positionals[1];
  if (positionals.length !== 2 || !id || !UUID.test(id)) throw new UsageError(`"webhooks ${action}" needs one endpoint id (see "webhooks list").`);
  return id;
}

/** Runs `work` with the server's database and secret box; an HttpError (a refusal) becomes the CLI's error. */
async function withDeps<T>(io: CliIo, work: (deps: ManageDeps) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  try {
    return await withDatabase(io, async (db) => work({ db, box: await loadSecretBox(config.auth, db), config: config.webhooks }));
  } catch (err) {
    if (err instanceof HttpError) throw new CliError(err.message);
    throw err;
  }
}

const secretNotice = (secret: string) =>
  `Secret (shown this once; the receiver verifies the webhook-signature header with it):\n  ${secret}\n`;

export const webhooksCommand = defineCommand({
  synopsis: 'webhooks add URL [--events a,b] | list | enable ID | disable ID | rotate ID | remove ID',
  help: [
    'Manage webhook endpoints (Standard Webhooks). "add" prints the new endpoint\'s',
    `secret once; --events takes some of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    '(all of them without it). "rotate" prints a new secret; the previous one keeps',
    'signing for WEBHOOK_SECRET_OVERLAP_HOURS. Running servers see a change within 5 s.',
  ],
  options: { events: { type: 'string' } },
  async run({ positionals, options }, io) {
    const [action] = positionals;
    if (options.events !== undefined && action !== 'add') throw new UsageError('--events goes with "webhooks add".');
    switch (action) {
      case 'add': {
        const url = positionals[1];
        if (positionals.length !== 2 || !url) throw new UsageError('"webhooks add" needs one URL.');
        const created = await withDeps(io, (deps) => createWebhookEndpoint(deps, CLI_ACTOR, { url, events: parseEvents(options.events) }));
        io.stdout.write(`Webhook endpoint ${created.endpoint.id} added for ${created.endpoint.events.length ? created.endpoint.events.join(', ') : 'every event'}.\n${secretNotice(created.secret)}`);
        return;
      }
      case 'list': {
        if (positionals.length !== 1) throw new UsageError('"webhooks list" takes no arguments.');
        const rows = await withDeps(io, async (deps) => (await listEndpoints(deps.db)).map((row) => toEndpointView(row)));
        if (rows.length === 0) {
          io.stdout.write('No webhook endpoints.\n');
          return;
        }
        io.stdout.write(
          `${table(
            ['ID', 'URL', 'EVENTS', 'ENABLED', 'CREATED'],
            rows.map((e) => [e.id, escapeForTerminal(e.url), e.events.length ? e.events.join(',') : 'all', e.enabled ? 'yes' : `no (${escapeForTerminal(e.disabledReason ?? '')})`, shortTime(e.createdAt)]),
          )}\n`,
        );
        return;
      }
      case 'enable':
      case 'disable': {
        const id = oneId(positionals, action);
        await withDeps(io, (deps) => setWebhookEnabled(deps, CLI_ACTOR, id, action === 'enable'));
        io.stdout.write(`Webhook endpoint ${id} ${action}d.\n`);
        return;
      }
      case 'rotate': {
        const id = oneId(positionals, action);
        const rotated = await withDeps(io, (deps) => rotateWebhookSecret(deps, CLI_ACTOR, id));
        io.stdout.write(`New secret for ${id}; the previous one also signs until ${shortTime(rotated.endpoint.previousSecretUntil)}.\n${secretNotice(rotated.secret)}`);
        return;
      }
      case 'remove': {
        const id = oneId(positionals, action);
        await withDeps(io, (deps) => removeWebhookEndpoint(deps, CLI_ACTOR, id));
        io.stdout.write(`Webhook endpoint ${id} removed, with its deliveries.\n`);
        return;
      }
      default:
        throw new UsageError('"webhooks" needs add, list, enable, disable, rotate or remove.');
    }
  },
});
