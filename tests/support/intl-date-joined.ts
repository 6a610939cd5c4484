/** Intl's own en-US format of the Date Joined column in `timeZone` (the runtime's without one): what formatDateJoined must read like. */
export function intlDateJoined(timeZone: string | undefined): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', ...(timeZone ? { timeZone } : {}) });
}
