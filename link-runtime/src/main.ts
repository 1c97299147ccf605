import { runMain } from '@outreach/platform';
import { start } from './server';

runMain('link-runtime', start);
