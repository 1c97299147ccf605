import { compileAdminSchemas } from '../http/admin.schemas';
import { invalid } from '../problems';
import { fieldErrorsOf } from './campaigns.pages';

describe('fieldErrorsOf', () => {
  const check = compileAdminSchemas();

  it('names what is wrong with a number that may also be null, not the null alternative', () => {
    const problems = check('patch-campaign', {
      pricePerConversation: 2_000_000_000_000,
      recipientCap: 'ten',
    });
    const errors = fieldErrorsOf(invalid(problems), {
      '/pricePerConversation': 'price',
      '/recipientCap': 'recipientCap',
    });
    expect(errors.price).toBe('pricePerConversation must be <= 1000000000000.');
    // A value of neither type is told both (the validator joins an anyOf's type problems).
    expect(errors.recipientCap).toBe('recipientCap must be integer or null.');
  });
});
