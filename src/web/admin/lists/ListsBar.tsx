import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import {
  ADMIN_LISTS_PATH,
  adminListPath,
  listsResultSchema,
  listViewSchema,
  type CreateListRequest,
  type ListView,
  type UpdateListRequest,
} from '../../../shared/admin/lists-api.js';
import { LIST_STATES, offeringPath, parseBoundaries, PORTAL_LIST, type ListState } from '../../../shared/lists/contract.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { buttonStyles } from '../../ui/controls.js';
import { cardStyles, inputStyles } from '../../ui/styles.js';
import { postJson, readJson, request } from '../common/admin-api.js';

/**
 * The admin's lists (issue 31): which list the page shows (the portal's waitlist by default; the
 * page address's `list` names it), and for admins, a new offering list and the chosen one's texts,
 * state and amount bands. The table, filters, insight, live updates, export, invites and deletion
 * below all follow the chosen list.
 */
export interface ListsBarProps {
  /** The chosen list's slug (undefined: the portal's). */
  list: string | undefined;
  onListChange: (slug: string | undefined) => void;
  /** The lists as loaded (the table's amount labels read the chosen one's bands). */
  onLists: (lists: ListView[]) => void;
  canEdit: boolean;
  onAccessError: (error: unknown) => boolean;
}

async function patchList(slug: string, body: UpdateListRequest): Promise<ListView> {
  const response = await request(adminListPath(slug), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return readJson(response, listViewSchema);
}

const STATE_LABELS: Record<ListState, string> = { draft: 'Draft (page not public)', open: 'Open (takes signups)', closed: 'Closed (page says so)' };

export function ListsBar({ list, onListChange, onLists, canEdit, onAccessError }: ListsBarProps) {
  const [lists, setLists] = useState<ListView[]>([]);
  const [mode, setMode] = useState<'view' | 'create' | 'edit'>('view');
  const pickerId = useId();

  // Bumped to load the lists again (after a change).
  const [version, setVersion] = useState(0);
  const load = useCallback(async () => setVersion((v) => v + 1), []);
  useEffect(() => {
    let current = true;
    void (async () => {
      try {
        const { lists: loaded } = await readJson(await request(ADMIN_LISTS_PATH), listsResultSchema);
        if (!current) return;
        setLists(loaded);
        onLists(loaded);
      } catch (error) {
        if (current && !onAccessError(error)) notifyError({ title: 'Error', description: 'Failed to load the lists' });
      }
    })();
    return () => {
      current = false;
    };
  }, [version, onAccessError, onLists]);

  const chosen = lists.find((l) => l.slug === (list ?? PORTAL_LIST));
  const offering = chosen && chosen.kind !== 'portal' ? chosen : null;

  return (
    <section aria-label="Lists" className={`${cardStyles} mb-6 p-5 sm:p-6`}>
      <div className="flex flex-wrap items-end gap-3">
        <div className="min-w-0">
          <label htmlFor={pickerId} className="mb-1 block text-sm font-medium text-slate-200">
            List
          </label>
          <select
            id={pickerId}
            value={list ?? PORTAL_LIST}
            onChange={(event) => onListChange(event.target.value === PORTAL_LIST ? undefined : event.target.value)}
            className={`${inputStyles} h-11 pr-8`}
          >
            {lists.length === 0 && <option value={list ?? PORTAL_LIST}>{list ?? 'Waitlist'}</option>}
            {lists.map((l) => (
              <option key={l.slug} value={l.slug}>
                {l.kind === 'portal' ? `${l.name} waitlist` : `${l.name} (${l.state})`}
              </option>
            ))}
          </select>
        </div>
        {offering && offering.state !== 'draft' && (
          <a href={offeringPath(offering.slug)} className="pb-3 text-sm text-emerald-300 underline underline-offset-2 hover:text-white">
            Public page {offeringPath(offering.slug)}
          </a>
        )}
        {canEdit && (
          <div className="ml-auto flex gap-2">
            {offering && (
              <button type="button" className={buttonStyles.secondary} onClick={() => setMode(mode === 'edit' ? 'view' : 'edit')} aria-expanded={mode === 'edit'}>
                Edit list
              </button>
            )}
            <button type="button" className={buttonStyles.secondary} onClick={() => setMode(mode === 'create' ? 'view' : 'create')} aria-expanded={mode === 'create'}>
              New offering list
            </button>
          </div>
        )}
      </div>
      {mode === 'create' && (
        <ListForm
          key="create"
          onCancel={() => setMode('view')}
          onSubmit={async (values) => {
            const body: CreateListRequest = { slug: values.slug, name: values.name, description: values.description, kind: 'testing-the-waters', bands: values.bands };
            const created = await readJson(await postJson(ADMIN_LISTS_PATH, body), listViewSchema);
            notifySuccess({ title: 'List created', description: `${created.name} is a draft until you open it.` });
            setMode('view');
            await load();
            onListChange(created.slug);
          }}
          onAccessError={onAccessError}
        />
      )}
      {mode === 'edit' && offering && (
        <ListForm
          key={`edit-${offering.slug}`}
          initial={offering}
          onCancel={() => setMode('view')}
          onSubmit={async (values) => {
            await patchList(offering.slug, { name: values.name, description: values.description, bands: values.bands, state: values.state });
            notifySuccess({ title: 'List saved', description: offering.slug });
            setMode('view');
            await load();
          }}
          onAccessError={onAccessError}
        />
      )}
    </section>
  );
}

interface ListFormValues {
  slug: string;
  name: string;
  description: string;
  bands: number[] | null;
  state: ListState;
}

function ListForm({
  initial,
  onSubmit,
  onCancel,
  onAccessError,
}: {
  initial?: ListView;
  onSubmit: (values: ListFormValues) => Promise<void>;
  onCancel: () => void;
  onAccessError: (error: unknown) => boolean;
}) {
  const ids = { slug: useId(), name: useId(), description: useId(), bands: useId(), bandsHint: useId(), state: useId() };
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const text = (name: string) => String(data.get(name) ?? '').trim();
    let bands: number[] | null;
    try {
      bands = parseBoundaries(text('bands'));
    } catch (error) {
      setProblem((error as Error).message);
      return;
    }
    setProblem(null);
    setBusy(true);
    try {
      await onSubmit({ slug: initial?.slug ?? text('slug'), name: text('name'), description: text('description'), bands, state: (text('state') || 'draft') as ListState });
    } catch (error) {
      if (!onAccessError(error)) setProblem(error instanceof Error ? error.message : 'The list could not be saved.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(event) => void submit(event)} className="mt-5 grid gap-4 sm:grid-cols-2" aria-label={initial ? 'Edit list' : 'New offering list'}>
      {!initial && (
        <div>
          <label htmlFor={ids.slug} className="mb-1 block text-sm font-medium text-slate-200">
            Slug (the page's address)
          </label>
          <input id={ids.slug} name="slug" required pattern="[a-z0-9]([a-z0-9\-]{0,46}[a-z0-9])?" className={`${inputStyles} h-11`} />
        </div>
      )}
      <div>
        <label htmlFor={ids.name} className="mb-1 block text-sm font-medium text-slate-200">
          Issuer name
        </label>
        <input id={ids.name} name="name" required maxLength={120} defaultValue={initial?.name} className={`${inputStyles} h-11`} />
      </div>
      <div className="sm:col-span-2">
        <label htmlFor={ids.description} className="mb-1 block text-sm font-medium text-slate-200">
          Short description
        </label>
        <textarea id={ids.description} name="description" maxLength={1000} rows={3} defaultValue={initial?.description} className={`${inputStyles} py-2`} />
      </div>
      <div>
        <label htmlFor={ids.bands} className="mb-1 block text-sm font-medium text-slate-200">
          Amount bands (USD boundaries)
        </label>
        <input id={ids.bands} name="bands" aria-describedby={ids.bandsHint} defaultValue={initial?.bands?.join(', ') ?? ''} placeholder="1000, 5000, 25000" className={`${inputStyles} h-11`} />
        <p id={ids.bandsHint} className="mt-1 text-xs text-slate-400">
          Empty: no amount asked. The page labels every amount non-binding.
        </p>
      </div>
      {initial && (
        <div>
          <label htmlFor={ids.state} className="mb-1 block text-sm font-medium text-slate-200">
            State
          </label>
          <select id={ids.state} name="state" defaultValue={initial.state} className={`${inputStyles} h-11`}>
            {LIST_STATES.map((state) => (
              <option key={state} value={state}>
                {STATE_LABELS[state]}
              </option>
            ))}
          </select>
        </div>
      )}
      {problem && (
        <p role="alert" className="text-sm text-rose-200 sm:col-span-2">
          {problem}
        </p>
      )}
      <div className="flex gap-2 sm:col-span-2">
        <button type="submit" className={buttonStyles.primary} disabled={busy}>
          {initial ? 'Save list' : 'Create list'}
        </button>
        <button type="button" className={buttonStyles.secondary} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
