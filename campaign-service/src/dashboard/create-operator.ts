import { parseArgs } from 'node:util';
import { ConfigError, createLogger, createPool, loadConfig, systemClock } from '@outreach/platform';
import { CONFIG_SPEC } from '../config';
import { runMigrations, SCHEMA } from '../server';
import { createOperator, type Operator } from './operators.service';

/** Who the project's activity says granted access through this command. */
export const CREATE_OPERATOR_ACTOR = 'create-operator (an administrator)';

/**
 * Creates (or resets the password of) a dashboard operator in the database named by the
 * environment, migrating first so it works on a fresh database. The demo seed calls this too.
 */
export async function createOperatorFromEnv(
  env: NodeJS.ProcessEnv,
  input: { email: string; password: string; projectIds?: string[] },
): Promise<Operator> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = createLogger('create-operator', config.LOG_LEVEL);
  await runMigrations(env);
  const url = new URL(config.DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${SCHEMA}`);
  const pool = createPool('create-operator', url.toString(), 1, logger);
  try {
    // Run by an administrator on the server: its grants show as this command's in the activity.
    return await createOperator({ pool, clock: systemClock, actor: CREATE_OPERATOR_ACTOR }, input);
  } finally {
    await pool.end();
  }
}

const USAGE =
  'usage: node campaign-service/dist/dashboard/create-operator.js --email <e-mail> --password <password> [--project prj_… ...]';

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      project: { type: 'string', multiple: true },
      help: { type: 'boolean' },
    },
  });
  if (values.help || !values.email || !values.password) {
    console.error(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const op = await createOperatorFromEnv(process.env, {
    email: values.email,
    password: values.password,
    projectIds: values.project ?? [],
  });
  console.log(
    `operator ${op.email} (${op.id}) ready; projects: ${(values.project ?? []).join(', ') || 'none'}`,
  );
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
