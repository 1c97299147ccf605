/** What `untilRefused` saw: the last status, and when the last admitted request was sent. */
export interface Refusal {
  status: number;
  /** Milliseconds from `since` to the sending of the last admitted request (0 when none was). */
  lastAdmittedMs: number;
}

/**
 * Sends `request` (which returns the status) every `everyMs` until one is refused or
 * `giveUpMs` passed since `since`. A change promised "within a second" applies to requests sent
 * a second after it, so it is judged by when each admitted request was sent, not by when a busy
 * machine delivered its answer.
 */
export async function untilRefused(
  request: () => Promise<number>,
  since: number,
  { everyMs = 50, giveUpMs = 3000 } = {},
): Promise<Refusal> {
  let lastAdmittedMs = 0;
  for (;;) {
    const sentAt = Date.now();
    const status = await request();
    if (status !== 200) return { status, lastAdmittedMs };
    lastAdmittedMs = sentAt - since;
    if (sentAt - since >= giveUpMs) return { status, lastAdmittedMs };
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
