import { useCallback, useEffect, useRef, type RefObject } from 'react';

/**
 * A field disabled while its form is busy loses focus to <body>. Call the returned function when an
 * attempt fails: once `busy` is false again, focus goes back to the field (`select` also selects its text).
 */
export function useRefocusAfterBusy(busy: boolean, field: RefObject<HTMLInputElement | null>, how: 'focus' | 'select' = 'focus'): () => void {
  const pending = useRef(false);
  useEffect(() => {
    if (!busy && pending.current) {
      pending.current = false;
      field.current?.[how]();
    }
  }, [busy, field, how]);
  return useCallback(() => {
    pending.current = true;
  }, []);
}
