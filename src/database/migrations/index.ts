import { CreateAuth1763800000000 } from './1763800000000-CreateAuth.js';
import { CreateSchemasAndCollections1763800001000 } from './1763800001000-CreateSchemasAndCollections.js';
import { CreateObjects1763800002000 } from './1763800002000-CreateObjects.js';
import { CreateFilebox1763800002500 } from './1763800002500-CreateFilebox.js';
import { CreateTasks1763800003000 } from './1763800003000-CreateTasks.js';
import { AddObjectKeyNetwork1763800013000 } from './1763800013000-AddObjectKeyNetwork.js';
import { AddResourceChildrenIndex1763800020000 } from './1763800020000-AddResourceChildrenIndex.js';
import { KeyFirstObjectKeyIndex1763800021300 } from './1763800021300-KeyFirstObjectKeyIndex.js';
import { FileboxFileParts1763800022000 } from './1763800022000-FileboxFileParts.js';
import { AddPageBytes1763800022500 } from './1763800022500-AddPageBytes.js';
import { ObjectExpiry1763800030000 } from './1763800030000-ObjectExpiry.js';
import { SequencedChanges1763800040000 } from './1763800040000-SequencedChanges.js';
import { RequestCountLease1763800050000 } from './1763800050000-RequestCountLease.js';
import { ObjectLifetimesAndFeedTimes1763800060000 } from './1763800060000-ObjectLifetimesAndFeedTimes.js';
import { TaxiiStatus1763800061000 } from './1763800061000-TaxiiStatus.js';
import { AuditTrail1763800070000 } from './1763800070000-AuditTrail.js';
import { ConsoleSessions1763800080000 } from './1763800080000-ConsoleSessions.js';
import { TaskListing1763800081000 } from './1763800081000-TaskListing.js';
import { ChangeAttribution1795819637156 } from './1795819637156-ChangeAttribution.js';
import { TaskAttempts1795819717617 } from './1795819717617-TaskAttempts.js';
import { Sightings1795820044558 } from './1795820044558-Sightings.js';
import { Warninglists1795820581222 } from './1795820581222-Warninglists.js';
import { TaskDedupe1795821606553 } from './1795821606553-TaskDedupe.js';
import { TaskQuotas1795822039612 } from './1795822039612-TaskQuotas.js';
import { ObjectHistoryAndApiClaim1795822421408 } from './1795822421408-ObjectHistoryAndApiClaim.js';
import { Sources1795822481412 } from './1795822481412-Sources.js';
import { SourceFeedState1795831569068 } from './1795831569068-SourceFeedState.js';
import { SightingSummarySources1795835744841 } from './1795835744841-SightingSummarySources.js';
import { SourcesDueTime1795900000000 } from './1795900000000-SourcesDueTime.js';
import { Markings1796000000000 } from './1796000000000-Markings.js';
import { KeyVersions1796000100000 } from './1796000100000-KeyVersions.js';
import { MarkedObjects1796000200000 } from './1796000200000-MarkedObjects.js';
import { Scoring1796100000000 } from './1796100000000-Scoring.js';
import { ScoreClaimsGate1796100100000 } from './1796100100000-ScoreClaimsGate.js';

/**
 * Every committed migration, in order. Listed explicitly (not globbed) so that the compiled service,
 * the TypeORM CLI and the ESM test runner all load the same set.
 */
export const MIGRATIONS = [
  CreateAuth1763800000000,
  CreateSchemasAndCollections1763800001000,
  CreateObjects1763800002000,
  CreateFilebox1763800002500,
  CreateTasks1763800003000,
  AddObjectKeyNetwork1763800013000,
  AddResourceChildrenIndex1763800020000,
  KeyFirstObjectKeyIndex1763800021300,
  FileboxFileParts1763800022000,
  AddPageBytes1763800022500,
  ObjectExpiry1763800030000,
  SequencedChanges1763800040000,
  RequestCountLease1763800050000,
  ObjectLifetimesAndFeedTimes1763800060000,
  TaxiiStatus1763800061000,
  AuditTrail1763800070000,
  ConsoleSessions1763800080000,
  TaskListing1763800081000,
  ChangeAttribution1795819637156,
  TaskAttempts1795819717617,
  Sightings1795820044558,
  Warninglists1795820581222,
  TaskDedupe1795821606553,
  TaskQuotas1795822039612,
  ObjectHistoryAndApiClaim1795822421408,
  Sources1795822481412,
  SourceFeedState1795831569068,
  SightingSummarySources1795835744841,
  SourcesDueTime1795900000000,
  Markings1796000000000,
  KeyVersions1796000100000,
  MarkedObjects1796000200000,
  Scoring1796100000000,
  ScoreClaimsGate1796100100000,
];
