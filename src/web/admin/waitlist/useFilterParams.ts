import { useCallback, useMemo } from 'react';
import { compactFilter, filterFromSearchParams, filterToSearchParams, FILTER_KEYS, LIST_KEY, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { useLocation, useNavigate } from '../../site/router.js';

/** A stable text for a filter: equal filters give equal keys (for memo and effect dependencies). */
export function filterKey(filter: WaitlistFilter): string {
  return JSON.stringify(compactFilter(filter));
}

/**
 * The address of the page showing `filter`: the filter's parameters replace those of `search`, in a
 * fixed order; any other parameter is kept. No filter gives no `?` at all.
 */
export function searchWithFilter(search: string, filter: WaitlistFilter): string {
  const params = new URLSearchParams(search);
  for (const key of [...FILTER_KEYS, LIST_KEY]) params.delete(key);
  const query = filterToSearchParams(compactFilter(filter), params).toString();
  return query ? `?${query}` : '';
}

/** `filter` with the fields of `patch` set, or removed where the patch leaves them empty or undefined. */
export function patchFilter(filter: WaitlistFilter, patch: Partial<WaitlistFilter>): WaitlistFilter {
  const next: WaitlistFilter = { ...filter };
  for (const [key, value] of Object.entries(patch) as Array<[keyof WaitlistFilter, string | undefined]>) {
    if (value === undefined || value === '') delete next[key];
    else (next as Record<string, string>)[key] = value;
  }
  return next;
}

/**
 * The admin's filter, kept in the page address (`?q=&from=&to=&country=&source=&campaign=&status=`)
 * so a view can be shared and survives a reload. Setting it replaces the history entry: typing a
 * search does not fill the back button with every keystroke.
 */
export function useFilterParams(): [WaitlistFilter, (next: WaitlistFilter) => void] {
  const location = useLocation();
  const navigate = useNavigate();
  const parsed = filterFromSearchParams(new URLSearchParams(location.search));
  const key = filterKey(parsed);
  // The same object while the address holds the same filter, so effects keyed on it do not rerun.
  // eslint-disable-next-line react-hooks/exhaustive-deps -- keyed on its content, not on the fresh parse.
  const filter = useMemo(() => parsed, [key]);

  const setFilter = useCallback(
    (next: WaitlistFilter) => {
      const { pathname, search, hash } = window.location;
      const nextSearch = searchWithFilter(search, next);
      if (nextSearch === search) return;
      navigate(`${pathname}${nextSearch}${hash}`, { replace: true });
    },
    [navigate],
  );

  return [filter, setFilter];
}
