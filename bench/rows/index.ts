import type { RowModule } from '../lib/row.js';
import { row1 } from './row1-authenticated-get.js';
import { row2 } from './row2-health.js';
import { row3 } from './row3-object-add.js';
import { row3c } from './row3c-parallel-adds.js';
import { row3d } from './row3d-updates.js';
import { row4 } from './row4-change-feed.js';
import { row5 } from './row5-object-list.js';
import { row6 } from './row6-task-queue.js';
import { row7 } from './row7-upload.js';
import { row8 } from './row8-download.js';
import { row9 } from './row9-request-limit.js';
import { row10 } from './row10-bulk-ingest.js';
import { row11 } from './row11-lookup.js';
import { row12 } from './row12-network.js';
import { row13and14 } from './row13-long-poll.js';
import { row15 } from './row15-taxii-objects.js';
import { row16 } from './row16-export.js';
import { row17 } from './row17-import.js';
import { row18 } from './row18-console-lookup.js';
import { row19 } from './row19-audited-writes.js';
import { row20 } from './row20-source-run.js';
import { row21 } from './row21-sightings.js';
import { row22 } from './row22-warninglists.js';
import { row23 } from './row23-fenced-queue.js';
import { row24a, row24b, row24c, row24d } from './row24-scored-reads.js';
import { row25a, row25b, row25c, row25d } from './row25-marked-reads.js';

/** Every row of the suite, in the order they run (and appear in the table). */
export const ALL_ROWS: RowModule[] = [
  row1,
  row2,
  row3,
  row3c,
  row3d,
  row4,
  row5,
  row6,
  row7,
  row8,
  row9,
  row10,
  row11,
  row12,
  row13and14,
  row15,
  row16,
  row17,
  row18,
  row19,
  row20,
  row21,
  row22,
  row23,
  row24a,
  row24b,
  row24c,
  row24d,
  row25a,
  row25b,
  row25c,
  row25d,
];
