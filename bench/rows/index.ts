import type { RowModule } from '../lib/row.js';
import { row1 } from './row1-authenticated-get.js';
import { row2 } from './row2-health.js';
import { row9 } from './row9-request-limit.js';

/** Every row of the suite, in the order they run (and appear in the table). */
export const ALL_ROWS: RowModule[] = [row1, row2, row9];
