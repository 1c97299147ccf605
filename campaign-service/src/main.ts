import { runMain } from '@outreach/platform';
import { start } from './server';

runMain('campaign-service', start);
