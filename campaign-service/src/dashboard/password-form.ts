import type { FieldErrors, Form } from './forms';
import { html, type SafeHtml } from './html';
import { field, withErrorSummary } from './layout';
import { MIN_PASSWORD_LENGTH } from './passwords';

/**
 * The form of a link's page (an invitation, a password reset): the account's address, shown, and
 * a password its holder chooses, twice. Posted with the sessionless form token (`csrf`).
 */
export function choosePasswordForm(input: {
  action: string;
  csrf: string;
  email: string;
  errors: FieldErrors;
  label: string;
  submit: string;
}): SafeHtml {
  const { errors } = input;
  return withErrorSummary(
    errors,
    html`<form method="post" action="${input.action}" novalidate class="narrow">
  <input type="hidden" name="_csrf" value="${input.csrf}">
  ${field({ name: 'email', label: 'E-mail address', type: 'email', value: input.email, attrs: html` readonly autocomplete="username"` })}
  ${field({ name: 'password', label: input.label, type: 'password', required: true, hint: `At least ${MIN_PASSWORD_LENGTH} characters.`, error: errors.password, attrs: html` autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}"` })}
  ${field({ name: 'confirmPassword', label: `${input.label} again`, type: 'password', required: true, error: errors.confirmPassword, attrs: html` autocomplete="new-password"` })}
  <div class="actions"><button type="submit">${input.submit}</button></div>
</form>`,
  );
}

/** The password a choosePasswordForm was sent with, and what is wrong with it (nothing when `errors` is empty). */
export function chosenPassword(form: Form): { password: string; errors: FieldErrors } {
  const password = form.get('password');
  const errors: FieldErrors = {};
  if (password.length < MIN_PASSWORD_LENGTH)
    errors.password = `Use at least ${MIN_PASSWORD_LENGTH} characters.`;
  else if (form.get('confirmPassword') !== password)
    errors.confirmPassword = 'Type the password again, exactly as above.';
  return { password, errors };
}
