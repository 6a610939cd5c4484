import { AuthApiError, AuthWeakPasswordError } from '@supabase/auth-js';
import { describe, expect, it } from 'vitest';
import { isCompleteCode, passwordErrorMessage } from './mfa.js';

describe('isCompleteCode', () => {
  it('accepts exactly six ASCII digits', () => {
    expect(isCompleteCode('012345')).toBe(true);
    for (const code of ['', '12345', '1234567', '12 345', '１２３４５６', 'abcdef']) expect(isCompleteCode(code)).toBe(false);
  });
});

describe('passwordErrorMessage', () => {
  it("says the current password is wrong instead of GoTrue's 'required' wording", () => {
    const error = new AuthApiError('Current password required when setting new password.', 400, 'current_password_invalid');
    expect(passwordErrorMessage(error)).toBe('Your current password is not correct.');
  });

  it("keeps GoTrue's weak_password message, which names the reasons", () => {
    const error = new AuthWeakPasswordError('Password should be at least 12 characters.', 422, ['length']);
    expect(passwordErrorMessage(error)).toBe('Password should be at least 12 characters.');
  });

  it('spells the reasons out when the message is empty', () => {
    const error = new AuthWeakPasswordError('', 422, ['length', 'pwned']);
    expect(passwordErrorMessage(error)).toBe('Choose another password: it is too short; it is a known or easily guessed password.');
  });

  it('passes any other message through', () => {
    expect(passwordErrorMessage(new AuthApiError('New password should be different from the old password.', 422, 'same_password'))).toBe(
      'New password should be different from the old password.',
    );
  });
});
