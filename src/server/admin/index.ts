/**
 * What other features take from the admin waitlist API (the declared interface; the import-graph
 * check lets them import nothing else of admin/): the filter of a query string or a body, checked
 * the same way everywhere (the insight panel, the export), the skeleton of an audited action on a
 * selection, and how an audit record keeps a filter (auditedFilter: the search as a keyed hash);
 * the ids of a selection in chunks (selectionIdChunks: the held signups' approve and reject).
 */
export {
  auditedAction,
  auditedFilter,
  auditedSelection,
  checkBodySelection,
  checkQueryFilter,
  IDS_BODY_LIMIT,
  queryFilter,
  selectionOf,
  selectionRouteOptions,
  type Actor,
  type Selection,
} from './selection.js';
/** The list's page (the admin's table and the API's GET /api/v1/entries: the same filter, cursor and keyset). */
export { readWaitlistPage } from './list.js';
export { selectionIdChunks } from './repository.js';
