import { runMain } from '@outreach/platform';
import { start } from './server';

runMain('recipient-service', start);
