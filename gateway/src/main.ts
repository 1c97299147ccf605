import { runMain } from '@outreach/platform';
import { start } from './server';

runMain('gateway', start);
