import { toast } from 'sonner';
import type { ToastText } from './copy.js';

/** Success toasts (the shell's src/web/site/toast.tsx only offers `notifyError`). */
export function notifySuccess({ title, description }: ToastText): void {
  toast.success(title, { description });
}
