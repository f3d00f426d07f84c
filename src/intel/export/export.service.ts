import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AccessContext } from '../../common/guard/access.js';
import { setTag } from '../../common/http/security-headers.js';
import { tlpOf } from '../../common/markings/tlp.js';
import { ReadPolicies } from '../../read-policy/read-policies.service.js';
import type { ReadPolicy } from '../../read-policy/read-policy.js';
import { ChangeSequencer } from '../change-sequencer.js';
import { CollectionsService } from '../collections.service.js';
import { chunkOf, CONTENT_TYPES, epilogueOf, KEY_FORMATS, prologueOf, type BodyContext, type ExportParams } from './export-formats.js';
import { exportState, ExportStates, positionNumbers } from './export-states.js';
import type { ExportQueryDto } from './export.dto.js';
import { ExportErrors } from './export.errors.js';
import { ExportRepository, type ExportPosition, type ExportSnapshot, type ExportState, type StateFacts } from './export.repository.js';

/** Changes with every change of an export's bytes for the same data (a format's layout): part of the ETag. 2: markings. */
const EXPORT_LAYOUT_VERSION = 2;

/** The query as the parameters of one export; 400 for a parameter the format does not take. */
export function exportParams(query: ExportQueryDto): ExportParams {
  if (query.keyType !== undefined && !KEY_FORMATS.includes(query.format)) throw ExportErrors.keyTypeNotTaken(query.format);
  if (query.urlScheme !== undefined && query.format !== 'txt') throw ExportErrors.urlSchemeNotTaken(query.format);
  return {
    format: query.format,
    keyType: query.keyType ?? null,
    urlScheme: query.urlScheme ?? 'keep',
  };
}

/** What an export's tag and its kept exclusions are made of besides the position: one per request. */
interface Tagged {
  collectionId: number;
  params: ExportParams;
  policy: ReadPolicy;
  /** The state of the lists that leave objects out (Exclusion.state), '' when none does. */
  lists: string;
}

/**
 * A strong tag: equal tags mean byte-equal bodies, since the numbers determine the stored objects
 * (ExportPosition) and the digest the collection, the parameters, the layout, the read policy's filters and
 * ceiling and the revisions of the warninglists that leave objects out (`lists`: a changed list never gets a
 * stale 304). Equal tags hence mean equal `X-Excluded-Count` and `X-TLP-Max` too (a change of an object's
 * marking is a change record: it moves the numbers).
 * Filtered (ReadPolicy.filtered), the version of the summaries (SIGHTING_VERSION) joins the numbers, and with
 * `minScore` the version of the other score inputs (SCORE_VERSION): the filter's answer changes with them.
 * `minScore` without `scoreAt` is judged at the request's time, which the digest then holds (tagKey): time alone
 * changes such an answer, so it is never 304.
 */
export function exportTag({ collectionId, params, policy, lists }: Tagged, position: ExportPosition): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([EXPORT_LAYOUT_VERSION, collectionId, params.format, params.keyType, params.urlScheme, ...policy.tagKey(), lists]))
    .digest('base64url')
    .slice(0, 16);
  return `"${positionNumbers(policy, position)}-${digest}"`;
}

/**
 * The headers of what an export holds besides its rows, on every answer (body, HEAD, 304): how many objects a
 * warninglist leaves out, and the most restrictive marking among the objects held (`TLP:CLEAR` when none).
 */
function setStateHeaders(response: Response, { excluded, marking }: ExportState): void {
  response.setHeader('X-Excluded-Count', String(excluded));
  response.setHeader('X-TLP-Max', tlpOf(marking));
}

/** RFC 9110 §13.1.2: `*` or a list of tags, compared weakly (a `W/` prefix does not matter). */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((entry) => {
    const candidate = entry.trim();
    return candidate === '*' || candidate.replace(/^W\//, '') === tag;
  });
}

/**
 * A client that takes nothing for this long is cut off: an export holds a connection of a small pool and an
 * open snapshot (which holds back vacuum), so a reader that stalls must not keep them indefinitely.
 */
const STALL_MS = 60_000;

/** Resolves once the socket takes more, or the client is gone (cut off after STALL_MS without progress). */
function drained(response: Response): Promise<void> {
  return new Promise((resolve) => {
    const stalled = setTimeout(() => response.destroy(), STALL_MS);
    const done = () => {
      clearTimeout(stalled);
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/**
 * `GET|HEAD .../export`: the live objects of a collection as one consistent snapshot, streamed with
 * backpressure from a server-side cursor (memory bounded by one batch of rows whatever the size).
 */
@Injectable()
export class ExportService {
  private readonly logger = new Logger(ExportService.name);
  /**
   * The objects left out and the marking, per state of a collection and its lists: a repeated export neither
   * reads nor matches keys nor reads its marking, and its HEAD and 304 read no object.
   */
  private readonly states = new ExportStates();

  constructor(
    private readonly collections: CollectionsService,
    private readonly repository: ExportRepository,
    private readonly sequencer: ChangeSequencer,
    private readonly policies: ReadPolicies,
  ) {}

  /** Answers the request itself (streams, 304, HEAD): its read policy is built here, from its principal and query. */
  async send(collectionName: string, query: ExportQueryDto, request: Request, response: Response): Promise<void> {
    const policy = this.policies.of((request as Request & AccessContext).principal!, query);
    const params = exportParams(query);
    const collection = await this.collections.findByName(collectionName);
    // Read-your-writes (the feed's rule): committed records still unnumbered make the tag non-canonical
    // (it would change again once they are numbered, with the same content), so wait for a pass first.
    let position = await this.repository.position(collection.id);
    if (position.pending > 0) {
      await this.sequencer.settled();
      position = await this.repository.position(collection.id);
    }
    // The lists read once (by the policy), for the tag and the body alike: a list changed meanwhile acts from the next request.
    const excluding = await policy.exclusion();
    const tagged: Tagged = { collectionId: collection.id, params, policy, lists: excluding?.state ?? '' };
    const ifNoneMatch = request.headers['if-none-match'];
    const stateAt = (at: ExportPosition) => exportState(tagged, at);
    // A state judged at the request's time (minScore without scoreAt) is never met again: kept for this request only.
    const states = policy.judgedNow ? new ExportStates() : this.states;
    const facts: StateFacts = {
      marking: { known: (at) => states.markingOf(stateAt(at)), found: (at, marking) => states.rememberMarking(stateAt(at), marking) },
      exclusion: excluding && {
        keyTypes: excluding.keyTypes,
        excludes: (key) => excluding.excludes([key]),
        known: (at) => states.idsOf(stateAt(at)),
        found: (at, ids) => states.remember(stateAt(at), ids),
      },
    };
    const head = request.method === 'HEAD';
    if (this.answeredByHeaders(tagged, position, ifNoneMatch, response) || head) {
      // Still only headers once the state is known (a GET's 304 may not be, when writes committed meanwhile): answered.
      if ((await this.stateHeaders(tagged, states, position, facts, ifNoneMatch, response)) || head) {
        response.end();
        return;
      }
    }
    const snapshot = await this.repository.open(collection.id, params, policy, facts);
    try {
      // Writes may have committed since: the snapshot's own position tags the body.
      const notModified = this.answeredByHeaders(tagged, snapshot.state.position, ifNoneMatch, response);
      setStateHeaders(response, snapshot.state);
      if (notModified) {
        response.end();
        return;
      }
      const body = { collection: collection.name, tag: response.getHeader('ETag') as string };
      await this.stream(snapshot, params, body, response);
    } catch (error) {
      if (!response.headersSent) throw error;
      // Never an error appended to a list a firewall loads: the cut connection tells the client it is incomplete.
      this.logger.error(`export of ${collection.name} failed mid-body: ${String(error)}`);
      response.destroy();
    } finally {
      await snapshot.close();
    }
  }

  /**
   * `X-Excluded-Count` and `X-TLP-Max` of an answer without a body (HEAD, 304), whose other headers are set:
   * known from an earlier answer of the state `position` (which tagged the answer; the count is 0 without an
   * excluding list), or read (the marking, and the keys when a list excludes) in a snapshot that then tags the
   * answer, since writes may have committed since its position was read. True when the headers are still the
   * whole answer of a GET (a 304).
   */
  private async stateHeaders(
    tagged: Tagged,
    states: ExportStates,
    position: ExportPosition,
    facts: StateFacts,
    ifNoneMatch: string | undefined,
    response: Response,
  ): Promise<boolean> {
    const state = exportState(tagged, position);
    const excluded = facts.exclusion ? states.countOf(state) : 0;
    const marking = states.markingOf(state);
    if (excluded !== undefined && marking !== undefined) {
      setStateHeaders(response, { position, excluded, marking });
      return response.statusCode === 304;
    }
    // What is read is remembered (`facts`), at the snapshot's position.
    const read = await this.repository.stateAt(tagged.collectionId, tagged.params, tagged.policy, facts);
    const notModified = this.answeredByHeaders(tagged, read.position, ifNoneMatch, response);
    setStateHeaders(response, read);
    return notModified;
  }

  /** Sets the headers; true when they are the whole answer (304). */
  private answeredByHeaders(tagged: Tagged, position: ExportPosition, ifNoneMatch: string | undefined, response: Response): boolean {
    const tag = exportTag(tagged, position);
    // A cache must revalidate, and never share a list across keys.
    setTag(response, tag);
    response.setHeader('Last-Modified', position.lastModified.toUTCString());
    if (noneMatch(ifNoneMatch, tag)) {
      response.status(304);
      return true;
    }
    response.status(200).setHeader('Content-Type', CONTENT_TYPES[tagged.params.format]);
    return false;
  }

  /** Writes every batch, waiting for 'drain' when the socket is full; stops at once when the client goes. */
  private async stream(snapshot: ExportSnapshot, params: ExportParams, body: BodyContext, response: Response): Promise<void> {
    let gone = false;
    const onClose = () => {
      // 'close' also follows a normal finish; only before it does it mean the client left.
      if (response.writableFinished) return;
      gone = true;
      snapshot.cancel();
    };
    response.on('close', onClose);
    try {
      const prologue = prologueOf(params.format, body);
      if (prologue !== '') response.write(prologue);
      for await (const rows of snapshot.batches()) {
        if (gone) return;
        if (!response.write(chunkOf(params.format, rows, body))) await drained(response);
        if (gone) return;
      }
      await new Promise<void>((resolve) => {
        response.end(epilogueOf(params.format), resolve);
        response.once('close', resolve);
      });
    } catch (error) {
      // A FETCH cancelled because the client left is no failure.
      if (!gone) throw error;
    } finally {
      response.off('close', onClose);
    }
  }
}
