import { toast } from 'sonner';
import type { ToastText } from './copy.js';

/** Success toasts; the description is optional (the spec's 'Signed out successfully' has none). */
export function notifySuccess({ title, description }: Pick<ToastText, 'title'> & Partial<Pick<ToastText, 'description'>>): void {
  toast.success(title, description === undefined ? undefined : { description });
}
