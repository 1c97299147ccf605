import type { ValidationProblem } from '@outreach/contracts';
import { AppError } from '@outreach/platform';

/** The 400 `invalid_request` every validation failure becomes, naming fields by JSON pointer. */
export function invalid(problems: ValidationProblem[], message = 'The request is invalid.'): AppError {
  return new AppError('invalid_request', message, { details: { problems } });
}

/** One problem at `pointer`. */
export function invalidField(pointer: string, rule: string, message: string): AppError {
  return invalid([{ pointer, rule, message }], `${pointer.slice(1) || 'body'} ${message}.`);
}
