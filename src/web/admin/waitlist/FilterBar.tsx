import { useEffect, useId, useRef, useState } from 'react';
import type { ChangeEvent, FormEvent, KeyboardEvent, ReactNode } from 'react';
import { compactFilter, isEmptyFilter, isValidDay, NONE_VALUE, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import type { WaitlistInsights } from '../../../shared/admin/waitlist-api.js';
import { ENTRY_STATUSES, type EntryStatus } from '../../../shared/waitlist/entry.js';
import { buttonStyles } from '../../ui/controls.js';
import { fetchWaitlistInsights, isAbort } from '../common/admin-api.js';
import { statusTexts } from '../common/copy.js';
import { filterTexts } from './copy.js';
import { filterKey } from './useFilterParams.js';

/** Typing waits this long before the view follows (Enter applies at once). */
export const FILTER_DEBOUNCE_MS = 150;

/** The fields as typed: text, and dates as the date inputs give them. */
type Draft = Required<Pick<WaitlistFilter, 'q' | 'from' | 'to' | 'country' | 'source' | 'campaign'>> & { status: EntryStatus | '' };

function toDraft(filter: WaitlistFilter): Draft {
  return {
    q: filter.q ?? '',
    from: filter.from ?? '',
    to: filter.to ?? '',
    country: filter.country ?? '',
    source: filter.source ?? '',
    campaign: filter.campaign ?? '',
    status: filter.status ?? '',
  };
}

/** The filter a draft stands for: text trimmed, a date only once it is a whole valid day, an impossible range cut at its start. */
export function draftToFilter(draft: Draft): WaitlistFilter {
  const filter = compactFilter({
    q: draft.q.trim(),
    from: isValidDay(draft.from) ? draft.from : '',
    to: isValidDay(draft.to) ? draft.to : '',
    country: draft.country.trim(),
    source: draft.source.trim(),
    campaign: draft.campaign.trim(),
    ...(draft.status ? { status: draft.status } : {}),
  });
  if (filter.from && filter.to && filter.from > filter.to) delete filter.to;
  return filter;
}

/** A filter besides the search is set. */
function hasFieldFilter(filter: WaitlistFilter): boolean {
  return !isEmptyFilter({ ...filter, q: undefined });
}

type Suggestions = Pick<WaitlistInsights, 'countries' | 'sources' | 'campaigns'>;

export interface FilterBarProps {
  filter: WaitlistFilter;
  onChange: (filter: WaitlistFilter) => void;
  /** A refused session while loading the suggestions. */
  onAccessError: (error: unknown) => boolean;
}

const fieldClass =
  'h-10 w-full min-w-0 rounded-lg border border-white/15 bg-slate-950/60 px-3 text-sm text-white [color-scheme:dark] placeholder:text-slate-400 transition-colors hover:border-white/25 focus:border-emerald-300';
const labelClass = 'mb-1 block text-xs font-medium text-slate-300';

/**
 * The waitlist's search and filters: a search landmark whose fields follow the typing after a short
 * pause (Enter at once), and whose selects and date fields apply when changed. The filter itself
 * lives in the page address (useFilterParams); this bar edits a draft of it. Country, source and
 * campaign take any text, with the most frequent values (the insights' top lists) suggested.
 */
export function FilterBar({ filter, onChange, onAccessError }: FilterBarProps) {
  const id = useId();
  const [draft, setDraft] = useState(() => toDraft(filter));
  /** The filter this bar last applied: when the address changes to something else (Clear filters, the insight panel, a shared link), the fields follow it. */
  const [applied, setApplied] = useState(() => filterKey(filter));
  const [seen, setSeen] = useState(() => filterKey(filter));
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  /** Phones: the filters besides the search are shown (always shown from md up). */
  const [showMore, setShowMore] = useState(() => hasFieldFilter(filter));
  const key = filterKey(filter);
  if (key !== seen) {
    setSeen(key);
    if (key !== applied) {
      setDraft(toDraft(filter));
      setApplied(key);
      if (hasFieldFilter(filter)) setShowMore(true);
    }
  }

  useEffect(() => () => clearTimeout(timer.current), []);

  function apply(next: Draft) {
    clearTimeout(timer.current);
    const nextFilter = draftToFilter(next);
    setApplied(filterKey(nextFilter));
    onChange(nextFilter);
  }

  function edit(next: Draft, now: boolean) {
    setDraft(next);
    clearTimeout(timer.current);
    if (now) apply(next);
    else timer.current = setTimeout(() => apply(next), FILTER_DEBOUNCE_MS);
  }

  /** A text or date field changed (its `name` is the filter key): the view follows after a pause. */
  function onText(event: ChangeEvent<HTMLInputElement>) {
    edit({ ...draft, [event.target.name]: event.target.value }, false);
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    apply(draft);
  }

  /** Enter in a field applies what is typed at once (the form has no submit button to do it). */
  function onKeyDown(event: KeyboardEvent<HTMLFormElement>) {
    if (event.key !== 'Enter' || !(event.target instanceof HTMLInputElement)) return;
    event.preventDefault();
    apply(draft);
  }

  function clear() {
    const empty = toDraft({});
    setDraft(empty);
    apply(empty);
  }

  // Suggestions for country, source and campaign: loaded once, when one of those fields is first used.
  const [suggestions, setSuggestions] = useState<Suggestions | null>(null);
  const suggesting = useRef<AbortController | null>(null);
  useEffect(() => () => suggesting.current?.abort(), []);
  function loadSuggestions() {
    if (suggesting.current) return;
    const controller = new AbortController();
    suggesting.current = controller;
    fetchWaitlistInsights({}, controller.signal)
      .then((insights) => setSuggestions(insights))
      .catch((error: unknown) => {
        if (isAbort(error)) return;
        // Without suggestions the fields still take any value; only a refused session matters.
        onAccessError(error);
      });
  }

  const active = !isEmptyFilter(filter);
  const utcId = `${id}-utc`;
  const moreId = `${id}-more`;

  return (
    <form
      role="search"
      aria-label={filterTexts.form}
      onSubmit={onSubmit}
      onKeyDown={onKeyDown}
      className="grid grid-cols-2 gap-3 md:grid-cols-4 xl:grid-cols-[minmax(0,1.6fr)_repeat(2,9.5rem)_repeat(4,minmax(0,1fr))]"
    >
      <Field label={filterTexts.search} htmlFor={`${id}-q`} className="col-span-2 xl:col-span-1">
        <input
          id={`${id}-q`}
          type="search"
          name="q"
          className={fieldClass}
          placeholder={filterTexts.searchPlaceholder}
          autoComplete="off"
          spellCheck={false}
          maxLength={254}
          value={draft.q}
          onChange={onText}
        />
      </Field>
      {/* On a phone the other filters fold away behind a toggle (open while one of them is set); from md up they are always there. */}
      <div id={moreId} className={`${showMore ? 'contents' : 'hidden'} md:contents`}>
        <Field label={filterTexts.from} htmlFor={`${id}-from`}>
          <input
            id={`${id}-from`}
            type="date"
            name="from"
            className={fieldClass}
            aria-describedby={utcId}
            min="1970-01-01"
            max={draft.to || undefined}
            value={draft.from}
            onChange={onText}
          />
        </Field>
        <Field label={filterTexts.to} htmlFor={`${id}-to`}>
          <input
            id={`${id}-to`}
            type="date"
            name="to"
            className={fieldClass}
            aria-describedby={utcId}
            min={draft.from || '1970-01-01'}
            value={draft.to}
            onChange={onText}
          />
        </Field>
        <SuggestField
          id={`${id}-country`}
          name="country"
          label={filterTexts.country}
          value={draft.country}
          onChange={onText}
          onFocus={loadSuggestions}
          options={suggestions?.countries.top ?? []}
          noneLabel={filterTexts.none.country}
        />
        <SuggestField
          id={`${id}-source`}
          name="source"
          label={filterTexts.source}
          value={draft.source}
          onChange={onText}
          onFocus={loadSuggestions}
          options={suggestions?.sources.top ?? []}
          noneLabel={filterTexts.none.source}
        />
        <SuggestField
          id={`${id}-campaign`}
          name="campaign"
          label={filterTexts.campaign}
          value={draft.campaign}
          onChange={onText}
          onFocus={loadSuggestions}
          options={suggestions?.campaigns.top ?? []}
          noneLabel={filterTexts.none.campaign}
        />
        <Field label={filterTexts.status} htmlFor={`${id}-status`}>
          <select
            id={`${id}-status`}
            name="status"
            className={fieldClass}
            value={draft.status}
            onChange={(event) => edit({ ...draft, status: event.target.value as EntryStatus | '' }, true)}
          >
            <option value="">{filterTexts.anyStatus}</option>
            {ENTRY_STATUSES.map((status) => (
              <option key={status} value={status}>
                {statusTexts.labels[status]}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <div className="col-span-2 flex flex-wrap items-center justify-between gap-x-4 gap-y-2 md:col-span-4 xl:col-span-7">
        <p id={utcId} className="text-xs text-slate-400">
          {filterTexts.utc}
        </p>
        <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
          <button
            type="button"
            className={`${buttonStyles.link} md:hidden`}
            aria-expanded={showMore}
            aria-controls={moreId}
            onClick={() => setShowMore((open) => !open)}
          >
            {showMore ? filterTexts.fewer : filterTexts.more}
          </button>
          {active && (
            <button type="button" className={buttonStyles.link} onClick={clear}>
              {filterTexts.clear}
            </button>
          )}
        </div>
      </div>
    </form>
  );
}

function Field({ label, htmlFor, className = '', children }: { label: string; htmlFor: string; className?: string; children: ReactNode }) {
  return (
    <div className={`min-w-0 ${className}`}>
      <label htmlFor={htmlFor} className={labelClass}>
        {label}
      </label>
      {children}
    </div>
  );
}

interface SuggestFieldProps {
  id: string;
  /** The filter key it edits. */
  name: 'country' | 'source' | 'campaign';
  label: string;
  value: string;
  onChange: (event: ChangeEvent<HTMLInputElement>) => void;
  onFocus: () => void;
  options: Array<{ value: string | null; count: number }>;
  /** What NONE_VALUE means for this field ('Unknown', 'Direct', 'No campaign'). */
  noneLabel: string;
}

/** A free-text filter with the most frequent values suggested (a datalist: any value can still be typed). */
function SuggestField({ id, name, label, value, onChange, onFocus, options, noneLabel }: SuggestFieldProps) {
  const listId = `${id}-options`;
  return (
    <Field label={label} htmlFor={id}>
      <input
        id={id}
        name={name}
        type="text"
        className={fieldClass}
        list={listId}
        placeholder={filterTexts.anyValue}
        autoComplete="off"
        spellCheck={false}
        maxLength={200}
        value={value}
        onChange={onChange}
        onFocus={onFocus}
      />
      <datalist id={listId}>
        {options.map((option) => (
          <option key={option.value ?? NONE_VALUE} value={option.value ?? NONE_VALUE}>
            {option.value === null ? `${noneLabel} (${option.count})` : `${option.value} (${option.count})`}
          </option>
        ))}
        {!options.some((option) => option.value === null) && <option value={NONE_VALUE}>{noneLabel}</option>}
      </datalist>
    </Field>
  );
}
