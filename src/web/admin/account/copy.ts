/**
 * Texts of the admin's account area (two-factor authentication, password change). The specification
 * does not cover this area, so none of its texts are touched; these sit beside them.
 */
import type { ToastText } from '../../site/toast.js';

export const accountTexts = {
  heading: 'Account',
  twoFactor: {
    heading: 'Two-factor authentication',
    loading: 'Checking two-factor authentication',
    off: 'Not set up. With an authenticator app, signing in needs a code from your phone as well as your password.',
    on: (added: string) => `On: an authenticator app was added on ${added}. Signing in needs your password and a code from the app.`,
    setUp: 'Set up authenticator app',
    starting: 'Starting...',
    scan: 'Scan this QR code with your authenticator app (1Password, Google Authenticator, Microsoft Authenticator or similar).',
    qrAlt: 'QR code that sets up this admin account in an authenticator app',
    secretLabel: 'Setup key',
    secretHint: "Can't scan the code? Enter this key in the app instead.",
    copy: 'Copy key',
    codeLabel: '6-digit code from the app',
    confirm: 'Confirm',
    confirming: 'Confirming...',
    cancel: 'Cancel',
    remove: 'Remove',
    removeTitle: 'Remove two-factor authentication?',
    removeText: 'Signing in will need only your password. You can set up an authenticator app again at any time.',
    retry: 'Try again',
    loadFailed: 'Two-factor authentication could not be checked.',
  },
  required: {
    heading: 'Set up two-factor authentication',
    text: 'Admins of this site must use two-factor authentication. Set up an authenticator app to open the waitlist.',
  },
  password: {
    heading: 'Change password',
    current: 'Current password',
    next: 'New password',
    confirm: 'Confirm new password',
    hint: 'At least 12 characters; not a common or easily guessed password. Your other sessions are signed out.',
    submit: 'Change password',
    busy: 'Changing...',
    show: 'Show passwords',
  },
  sessions: {
    heading: 'Sessions',
    intro: 'Where this admin account is signed in. Sign out any session you do not recognise.',
    loading: 'Checking your sessions',
    loadFailed: 'Your sessions could not be loaded.',
    retry: 'Try again',
    thisDevice: 'This device',
    signedIn: 'Signed in',
    lastActive: 'Last active',
    ip: 'IP address',
    unknownIp: 'Unknown',
    signOut: 'Sign out',
    signOutLabel: (device: string, signedIn: string) => `Sign out ${device}, signed in ${signedIn}`,
    signOutOthers: 'Sign out all other sessions',
    signingOut: 'Signing out...',
    onlyThis: 'No other sessions: this is the only device signed in.',
  },
  role: {
    heading: 'Role',
    label: 'Your role',
    /** What each role may do (src/shared/admin/roles.ts). */
    rights: {
      owner: 'You can do everything an admin can, and manage the team: who is an owner, an admin or a viewer.',
      admin: 'You can view, search, export, delete and invite waitlist entries and see the e-mail outbox.',
      viewer: 'You can view and search the waitlist and its insights. Exporting, deleting, inviting and the e-mail outbox need an admin.',
    },
  },
  team: {
    heading: 'Team',
    intro: 'Everyone who can sign in to this admin area. Owners manage roles; there is always at least one owner.',
    loading: 'Loading the team',
    loadFailed: 'The team could not be loaded.',
    retry: 'Try again',
    you: 'You',
    roleLabel: (email: string) => `Role of ${email}`,
    change: 'Change role',
    changeLabel: (email: string) => `Change the role of ${email}`,
    changing: 'Changing...',
    lastSignIn: 'Last sign-in',
    never: 'Never',
  },
} as const;

export const accountToasts = {
  error: (description: string): ToastText => ({ title: 'Error', description }),
  incompleteCode: { title: 'Error', description: 'Enter the 6 digits your authenticator app shows.' },
  copied: { title: 'Setup key copied' },
  copyFailed: { title: 'Error', description: 'Could not copy the key. Select it and copy it yourself.' },
  enrolled: {
    title: 'Two-factor authentication is on',
    description: 'From now on, signing in needs your password and a code from your authenticator app.',
  },
  removed: { title: 'Two-factor authentication removed', description: 'Signing in needs only your password now.' },
  passwordMismatch: { title: 'Error', description: 'The new password and its confirmation do not match.' },
  roleChanged: (email: string, role: string): ToastText => ({ title: 'Role changed', description: `${email} is now ${role}.` }),
  sessionsRevoked: (count: number): ToastText => ({
    title: count === 1 ? 'Session signed out' : 'Sessions signed out',
    description: count === 0 ? 'Those sessions had already ended.' : `${count} session${count === 1 ? '' : 's'} signed out.`,
  }),
  passwordChanged: { title: 'Password changed', description: 'Your other sessions have been signed out.' },
} as const;
