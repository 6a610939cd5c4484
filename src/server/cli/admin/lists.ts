import { allLists } from '../../db/lists.js';
import { HttpError } from '../../http/errors.js';
import { createList, updateList, type ListActor } from '../../lists/manage.js';
import { amountBands, isValidSlug, LIST_KINDS, offeringPath, parseBoundaries, type ListKind } from '../../../shared/lists/contract.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand, UsageError, type CliIo } from '../program.js';
import { escapeForTerminal } from './audit.js';
import { shortTime, table } from './table.js';

const CLI_ACTOR: ListActor = { email: null, id: null, ip: null, by: 'cli' };

/** Runs `work` with the database; an HttpError (a refusal: a taken slug, no such list) becomes the CLI's error. */
async function withDb<T>(io: CliIo, work: Parameters<typeof withDatabase<T>>[1]): Promise<T> {
  try {
    return await withDatabase(io, work);
  } catch (err) {
    if (err instanceof HttpError) throw new CliError(err.message);
    throw err;
  }
}

function oneSlug(positionals: string[], action: string): string {
  const slug = positionals[1];
  if (positionals.length !== 2 || !isValidSlug(slug) || slug === 'portal') {
    throw new UsageError(`"lists ${action}" needs one offering list's slug (lower-case letters, digits and hyphens; see "lists list").`);
  }
  return slug;
}

function bandsOption(value: string | undefined): number[] | null | undefined {
  if (value === undefined) return undefined;
  try {
    return parseBoundaries(value);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export const listsCommand = defineCommand({
  synopsis: 'lists create SLUG --name NAME --kind testing-the-waters [--description TEXT] [--bands 1000,5000,25000] | open SLUG | close SLUG | list',
  help: [
    'Manage the offering lists (issue 31). "create" makes a draft, whose page',
    '/offerings/SLUG is not found until "open"; "close" keeps the page, saying it',
    'takes no more signups. --bands sets the non-binding intended-amount bands by',
    'their boundaries in whole dollars (none: no amount asked). Every change is audited.',
  ],
  options: { name: { type: 'string' }, kind: { type: 'string' }, description: { type: 'string' }, bands: { type: 'string' } },
  async run({ positionals, options }, io) {
    const [action] = positionals;
    const creating = action === 'create';
    if (!creating && (options.name !== undefined || options.kind !== undefined || options.description !== undefined || options.bands !== undefined)) {
      throw new UsageError('--name, --kind, --description and --bands go with "lists create".');
    }
    switch (action) {
      case 'create': {
        const slug = oneSlug(positionals, action);
        const name = options.name?.trim();
        if (!name) throw new UsageError('"lists create" needs --name NAME (the issuer\'s name).');
        if (!(LIST_KINDS as readonly string[]).includes(options.kind ?? '')) throw new UsageError(`"lists create" needs --kind ${LIST_KINDS.join(' or ')}.`);
        const list = await withDb(io, (db) =>
          createList(db, CLI_ACTOR, { slug, name, kind: options.kind as ListKind, description: options.description?.trim(), bands: bandsOption(options.bands) }),
        );
        io.stdout.write(`List ${list.slug} created as a draft; "lists open ${list.slug}" publishes ${offeringPath(list.slug)}.\n`);
        return;
      }
      case 'open':
      case 'close': {
        const slug = oneSlug(positionals, action);
        await withDb(io, (db) => updateList(db, CLI_ACTOR, slug, { state: action === 'open' ? 'open' : 'closed' }));
        io.stdout.write(`List ${slug} ${action === 'open' ? 'opened' : 'closed'}.\n`);
        return;
      }
      case 'list': {
        if (positionals.length !== 1) throw new UsageError('"lists list" takes no arguments.');
        const lists = await withDb(io, (db) => allLists(db));
        io.stdout.write(
          `${table(
            ['SLUG', 'KIND', 'STATE', 'NAME', 'BANDS', 'UPDATED'],
            lists.map((l) => [
              l.slug,
              l.kind,
              l.state,
              l.kind === 'portal' ? '(the portal\'s waitlist)' : escapeForTerminal(l.name),
              amountBands(l.bands).map((b) => b.label).join('; ') || '-',
              shortTime(l.updatedAt),
            ]),
          )}\n`,
        );
        return;
      }
      default:
        throw new UsageError('"lists" needs create, open, close or list.');
    }
  },
});
