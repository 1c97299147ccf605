import { parseArgs } from 'node:util';
import { ConfigError, createLogger, createPool, loadConfig, systemClock } from '@outreach/platform';
import type { Pool } from 'pg';
import { CONFIG_SPEC } from '../config';
import { runMigrations, SCHEMA } from '../server';
import { invitationPath, inviteOperator } from './invitations.service';
import { ADMINISTRATOR, createOperator, grantProjects, type Operator } from './operators.service';
import { issuePasswordReset, passwordResetPath } from './password-resets.service';

/** Runs `work` on a pool of the database the environment names, migrated first (so a fresh one works). */
async function withDatabase<T>(env: NodeJS.ProcessEnv, work: (pool: Pool) => Promise<T>): Promise<T> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = createLogger('create-operator', config.LOG_LEVEL);
  await runMigrations(env);
  const url = new URL(config.DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${SCHEMA}`);
  const pool = createPool('create-operator', url.toString(), 1, logger);
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/**
 * Creates (or resets the password of) a dashboard operator in the database named by the
 * environment, migrating first so it works on a fresh database. The demo seed calls this too.
 */
export function createOperatorFromEnv(
  env: NodeJS.ProcessEnv,
  input: { email: string; password: string; projectIds?: string[] },
): Promise<Operator> {
  // Run by an administrator on the server: its grants show as this command's in the activity.
  return withDatabase(env, (pool) =>
    createOperator({ pool, clock: systemClock, actor: ADMINISTRATOR }, input),
  );
}

/**
 * Invites an address with no account to manage a project, as an administrator: the path of the
 * invitation's link (`/dashboard/join/…`), which lets whoever opens it choose the password, so
 * that none is typed on a command line or passed on.
 */
export async function inviteOperatorFromEnv(
  env: NodeJS.ProcessEnv,
  input: { email: string; projectId: string },
): Promise<{ path: string; email: string; expiresAt: Date }> {
  const invitation = await withDatabase(env, (pool) =>
    inviteOperator({ pool, clock: systemClock, actor: ADMINISTRATOR }, input),
  );
  return {
    path: invitationPath(invitation.token),
    email: invitation.email,
    expiresAt: invitation.expiresAt,
  };
}

/**
 * Makes a password reset link for an existing account, as an administrator: the path of the link
 * (`/dashboard/reset-password/…`), whose holder chooses the new password, so that none is typed
 * on a command line or passed on.
 */
export async function resetLinkFromEnv(
  env: NodeJS.ProcessEnv,
  email: string,
  options: { signOut?: boolean } = {},
): Promise<{ path: string; email: string; expiresAt: Date }> {
  const reset = await withDatabase(env, (pool) =>
    issuePasswordReset({ pool, clock: systemClock, actor: ADMINISTRATOR }, email, options),
  );
  return { path: passwordResetPath(reset.token), email: reset.email, expiresAt: reset.expiresAt };
}

/** Gives an existing account access to projects, as an administrator, its password untouched. */
export function grantProjectsFromEnv(
  env: NodeJS.ProcessEnv,
  input: { email: string; projectIds: string[] },
): Promise<Operator> {
  return withDatabase(env, (pool) =>
    grantProjects({ pool, clock: systemClock, actor: ADMINISTRATOR }, input.email, input.projectIds),
  );
}

const COMMAND = 'node campaign-service/dist/dashboard/create-operator.js';
const USAGE = `usage: ${COMMAND} --email <e-mail> --invite --project prj_… [--base-url https://<dashboard host>]
         a new address: prints a link, working once for 7 days, whose holder chooses the password
       ${COMMAND} --email <e-mail> --reset [--sign-out] [--base-url https://<dashboard host>]
         an existing account: prints a link, working once for 24 hours, whose holder chooses a new password
         (--sign-out: and ends every session of the account now)
       ${COMMAND} --email <e-mail> --project prj_… [--project prj_… ...]
         an existing account: adds it to the projects, its password untouched
       ${COMMAND} --email <e-mail> --password <password> [--project prj_… ...]
         creates the account with that password, or resets an existing one's (ending its sessions)`;

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      invite: { type: 'boolean' },
      reset: { type: 'boolean' },
      'sign-out': { type: 'boolean' },
      project: { type: 'string', multiple: true },
      'base-url': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const projects = values.project ?? [];
  // An invitation is to one project: the account it makes can then be given others on the dashboard.
  const usable = values.reset
    ? !values.invite && !values.password && projects.length === 0
    : !values['sign-out'] &&
      (values.invite
        ? !values.password && projects.length === 1
        : Boolean(values.password) || projects.length > 0);
  if (values.help || !values.email || !usable) {
    console.error(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const base = (values['base-url'] ?? '').replace(/\/+$/, '');
  const printLink = (what: string, link: { path: string; expiresAt: Date }) => {
    console.log(`${what}, working once until ${link.expiresAt.toISOString()}:\n${base}${link.path}`);
    if (!base) console.log("(open it at the dashboard's address, or pass --base-url)");
  };
  if (values.reset) {
    const reset = await resetLinkFromEnv(process.env, values.email, { signOut: values['sign-out'] });
    if (values['sign-out']) console.log(`${reset.email} is signed out everywhere`);
    return printLink(`password reset link for ${reset.email}`, reset);
  }
  if (values.invite) {
    const invited = await inviteOperatorFromEnv(process.env, { email: values.email, projectId: projects[0] });
    return printLink(`invitation for ${invited.email} to ${projects[0]}`, invited);
  }
  const op = values.password
    ? await createOperatorFromEnv(process.env, {
        email: values.email,
        password: values.password,
        projectIds: projects,
      })
    : await grantProjectsFromEnv(process.env, { email: values.email, projectIds: projects });
  console.log(`operator ${op.email} (${op.id}) ready; projects: ${projects.join(', ') || 'none'}`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
