import { TIMED_OUT, within } from './within';

afterEach(() => jest.useRealTimers());

test('answers the value in time, TIMED_OUT after, a rejection as one, and leaves no timer behind', async () => {
  jest.useFakeTimers();
  expect(await within(Promise.resolve(7), 10_000)).toBe(7);
  await expect(within(Promise.reject(new Error('no')), 10_000)).rejects.toThrow('no');
  // Neither left its ten-second timer running.
  expect(jest.getTimerCount()).toBe(0);
  const late = within(new Promise(() => {}), 20);
  jest.advanceTimersByTime(20);
  expect(await late).toBe(TIMED_OUT);
});
