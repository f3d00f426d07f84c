import { Injectable } from '@nestjs/common';
import type { ChildNameResolver } from '../common/guard/access.decorators.js';
import type { Principal } from '../common/guard/access.js';
import { CollectionsService } from '../intel/collections.service.js';
import { ObjectVersionsService, type ObjectVersionRow } from '../intel/object-versions.service.js';
import type { ReadPolicy } from '../read-policy/read-policy.js';
import { CONTEXT_EXTENSION_DEFINITION, SERVICE_IDENTITY, toIndicator, toSco, type StixObject } from '../stix/stix-projection.js';
import { STIX_MEDIA_TYPE, TaxiiResult } from './taxii-http.js';
import { encodeNext, microsecondTimestamp, walkOf, type WalkFilter, type WalkPosition } from './taxii-query.js';
import { TaxiiErrors } from './taxii.errors.js';

/** A served object: the STIX object, when it was added to the collection, its version and where it sits. */
interface Served {
  object: StixObject;
  dateAdded: string;
  version: string;
  seq: number;
  part: number;
}

/** A collection as TAXII names it. */
interface FeedCollection {
  name: string;
  taxiiId: string;
  createdAt: string;
}

/** Feed positions read per statement at most, and statements per request at most (a page may end early). */
const SCAN_ROUNDS = 8;

const SCO_TYPES = new Set(['file', 'domain-name', 'url', 'ipv4-addr', 'ipv6-addr']);
const CONSTANT_OBJECTS = [SERVICE_IDENTITY, CONTEXT_EXTENSION_DEFINITION];
const CONSTANT_VERSION = microsecondTimestamp(SERVICE_IDENTITY.modified as string)!;

/** The objects of one feed position: its indicator version, and the observable unless it is a removal. */
function servedOf(row: ObjectVersionRow, collection: string): Served[] {
  const indicator = toIndicator({
    indicatorUuid: row.uid,
    collection,
    object: row.object,
    firstAdded: row.addedAt,
    modified: row.at,
    ...(row.reason !== null && { removal: row.reason }),
    tlp: row.tlp,
  });
  const served: Served[] = [{ object: indicator, dateAdded: row.at, version: row.at, seq: row.position, part: 0 }];
  if (row.operation !== 'Remove') {
    served.push({ object: toSco(row.object, row.tlp), dateAdded: row.nextMicrosecond, version: row.nextMicrosecond, seq: row.position, part: 1 });
  }
  return served;
}

/** The filters a served object must pass in JavaScript (time, type, id, spec version). */
function passes(served: Served, filter: WalkFilter): boolean {
  const { object } = served;
  return (
    (filter.addedAfter === undefined || served.dateAdded > filter.addedAfter) &&
    (filter.types === undefined || filter.types.includes(object.type)) &&
    (filter.ids === undefined || filter.ids.includes(object.id)) &&
    (filter.specVersions === undefined || filter.specVersions.includes('2.1'))
  );
}

const isAfter = (served: Served, position: WalkPosition) => served.seq > position.seq || (served.seq === position.seq && served.part > position.part);

/**
 * Collections, objects, versions and manifests of TAXII 2.1 over the intel collections, read through the
 * intel area's services. Every read is a walk over the collection's change feed: position 0 holds the
 * service's identity and the context extension definition (added when the collection was registered),
 * then each position its indicator version (`date_added` the position's time) and, unless it removed
 * the object, the object's observable one microsecond later. `next` is a keyset on (position, part).
 */
@Injectable()
export class TaxiiFeedService implements ChildNameResolver {
  constructor(
    private readonly collections: CollectionsService,
    private readonly versions: ObjectVersionsService,
  ) {}

  /** For the access guard: the collection a TAXII path names by its id. */
  nameOf(taxiiId: string): Promise<string | undefined> {
    return this.collections.nameOfTaxiiId(taxiiId);
  }

  async collectionsFor(principal: Principal) {
    const collections = await this.collections.feedCollections(principal);
    return { collections: collections.map((collection) => this.collectionView(collection)) };
  }

  /** One collection the key may read or write; 404 for any other (unknown, or invisible to the key). */
  async collectionFor(principal: Principal, taxiiId: string) {
    const collection = (await this.collections.feedCollections(principal)).find((found) => found.taxiiId === taxiiId);
    if (!collection) throw TaxiiErrors.collectionNotFound(taxiiId);
    return this.collectionView(collection);
  }

  private collectionView(collection: { name: string; taxiiId: string; canRead: boolean; canWrite: boolean }) {
    return {
      id: collection.taxiiId,
      title: collection.name,
      description: `The intel collection ${collection.name}: one indicator per object, with its observable.`,
      alias: collection.name,
      can_read: collection.canRead,
      can_write: collection.canWrite,
      media_types: [STIX_MEDIA_TYPE],
    };
  }

  /** The collection a TAXII path names (the guard has checked access already); 404 when there is none. */
  async collection(taxiiId: string): Promise<FeedCollection> {
    const name = await this.collections.nameOfTaxiiId(taxiiId);
    if (name === undefined) throw TaxiiErrors.collectionNotFound(taxiiId);
    return { name, ...(await this.collections.feedIdentity(name)) };
  }

  /** `GET .../objects/`: an envelope. */
  async objects(policy: ReadPolicy, taxiiId: string, query: URLSearchParams): Promise<TaxiiResult> {
    const page = await this.page(policy, taxiiId, query);
    return this.answer(page, { objects: page.items.map((served) => served.object) });
  }

  /** `GET .../objects/{id}/`: the envelope of one object's versions; 404 when none matches. */
  async object(policy: ReadPolicy, taxiiId: string, objectId: string, query: URLSearchParams): Promise<TaxiiResult> {
    const page = await this.page(policy, taxiiId, query, { ids: [objectId] });
    if (page.items.length === 0 && !page.next && !query.has('next')) throw TaxiiErrors.objectNotFound(objectId);
    return this.answer(page, { objects: page.items.map((served) => served.object) });
  }

  /** `GET .../objects/{id}/versions/`. */
  async objectVersions(policy: ReadPolicy, taxiiId: string, objectId: string, query: URLSearchParams): Promise<TaxiiResult> {
    const page = await this.page(policy, taxiiId, query, { ids: [objectId], versions: 'all' });
    if (page.items.length === 0 && !page.next && !query.has('next')) throw TaxiiErrors.objectNotFound(objectId);
    return this.answer(page, { versions: page.items.map((served) => served.version) });
  }

  /** `GET .../manifest/`. */
  async manifest(policy: ReadPolicy, taxiiId: string, query: URLSearchParams): Promise<TaxiiResult> {
    const page = await this.page(policy, taxiiId, query);
    return this.answer(page, {
      objects: page.items.map((served) => ({ id: served.object.id, date_added: served.dateAdded, version: served.version, media_type: STIX_MEDIA_TYPE })),
    });
  }

  /** `more` and `next` together, the date headers of what is served (or of the request's bound when nothing is). */
  private answer(page: { items: Served[]; next?: string; addedAfter?: string; excluded: number }, body: Record<string, unknown[]>): TaxiiResult {
    const [name] = Object.keys(body);
    const first = page.items[0]?.dateAdded ?? page.addedAfter ?? EPOCH;
    const last = page.items.at(-1)?.dateAdded ?? page.addedAfter ?? EPOCH;
    return new TaxiiResult(
      { more: page.next !== undefined, ...(page.next !== undefined && { next: page.next }), ...(body[name].length > 0 && body) },
      { 'X-TAXII-Date-Added-First': first, 'X-TAXII-Date-Added-Last': last, 'X-Excluded-Count': String(page.excluded) },
    );
  }

  /**
   * One page of the walk the request asks for: up to `limit` objects after its position that pass its
   * filters, in feed order, and the `next` to continue from when more may follow. The versions of objects
   * with a key on a warninglist acting at `excludeFromExport` or beyond (as the lists are now) are walked
   * past and counted in `excluded` (stored objects, as exports count: a life whose indicator or observable
   * would have been served counts once), never served, unless the walk
   * says `warninglists=ignore`. Walked past, they move `after` as served objects do: `next` continues after
   * them, so a page they shorten (even to nothing) loses and repeats nothing; listed objects right after a
   * full page are walked past as well, so they never make a `more: true` followed by an empty last page.
   * Versions marked above the walk's ceiling (the key's `maxTLP`, narrowed by the walk's) are not there at all
   * (left out by the statement, never counted); an object named by its indicator id (`match[id]`, one object,
   * its versions) is there only while its last version is within the ceiling: above it, it answers as an id
   * no object holds.
   */
  private async page(requestPolicy: ReadPolicy, taxiiId: string, query: URLSearchParams, fixed: Partial<WalkFilter> = {}) {
    const collection = await this.collection(taxiiId);
    const walk = walkOf(query, taxiiId, fixed);
    const { filter, limit } = walk;
    // The walk's own mode and ceiling (`next` carries them), not only this request's parameters.
    const policy = requestPolicy.withWarninglists(filter.warninglists ?? 'apply').narrowedTo(filter.maxTlp);
    const exclusion = await policy.exclusion();
    const items: Served[] = [];
    // The lives walked past: a listed position's objects are walked past in the same page (`take` never stops
    // at one), so the pages of a walk count each life once (match[version]=all: once per page its versions reach).
    const excluded = new Set<string>();
    let after = walk.after;
    let more = false;
    const take = (served: Served, listed?: string): boolean => {
      if (!isAfter(served, after)) return true;
      // Past a full page, a listed object is walked past too: `more` then means an object to serve may follow.
      if (items.length === limit && listed === undefined) {
        more = true;
        return false;
      }
      after = { seq: served.seq, part: served.part };
      if (passes(served, filter) && this.constantVersionPasses(served, filter)) {
        if (listed === undefined) items.push(served);
        else excluded.add(listed);
      }
      return true;
    };
    if (after.seq === 0) {
      CONSTANT_OBJECTS.forEach((object, part) =>
        take({ object, dateAdded: part === 0 ? collection.createdAt : plusMicrosecond(collection.createdAt), version: CONSTANT_VERSION, seq: 0, part }),
      );
    }
    const lives = this.livesOf(filter);
    const readsFeed = lives === undefined || lives.length > 0;
    const wantsFeedTypes = filter.types === undefined || filter.types.some((type) => type === 'indicator' || SCO_TYPES.has(type));
    for (let round = 0; readsFeed && wantsFeedTypes && !more && round < SCAN_ROUNDS; round++) {
      const read = await this.versions.read(collection.name, {
        // A position half served (its indicator, not its observable) is read again.
        afterSeq: after.part === 0 && after.seq > 0 ? after.seq - 1 : after.seq,
        ...(filter.addedAfter !== undefined && { notBefore: filter.addedAfter }),
        ...(lives !== undefined && { lives }),
        versions: filter.versions,
        // Records marked above the ceiling are not there: walked past in SQL, never counted.
        ...(policy.restricted && { maxTlp: policy.ceiling }),
        // Lives scoring below the walk's minScore (at the time its first page fixed) are not there either, nor counted.
        ...(filter.score !== undefined && { score: filter.score }),
        // A position serves one or two objects: the first read asks for about enough of them.
        limit: round === 0 ? Math.min(limit, Math.ceil(limit / 2) + 1) : limit,
      });
      if (walk.after.seq > read.lastSeq) throw TaxiiErrors.invalidQuery('next is not a value this server gave');
      for (const row of read.rows) {
        const listed = exclusion?.excludes(row.object.keys) ? row.uid : undefined;
        if (!servedOf(row, collection.name).every((served) => take(served, listed))) break;
      }
      if (!read.full) break;
      // Scanned enough for one request: the page ends here, possibly short, and `next` continues the scan.
      if (round === SCAN_ROUNDS - 1) more = true;
    }
    // `after` is the last object looked at: the last one served when the page is full.
    return { items, excluded: excluded.size, addedAfter: filter.addedAfter, ...(more && { next: encodeNext(taxiiId, after, walk) }) };
  }

  /** The constant objects have one version, at their `modified`. */
  private constantVersionPasses(served: Served, filter: WalkFilter): boolean {
    if (served.seq !== 0 || filter.versions === 'all') return true;
    const { first, last, at } = filter.versions;
    return first || last || at.includes(CONSTANT_VERSION);
  }

  /**
   * The object lives `match[id]` names, when it names only indicators (and constant objects): the read is then
   * narrowed to them. Undefined when it names an observable (matched as served) or nothing.
   */
  private livesOf(filter: WalkFilter): string[] | undefined {
    if (filter.ids === undefined) return undefined;
    const constants = new Set(CONSTANT_OBJECTS.map((object) => object.id));
    const others = filter.ids.filter((id) => !constants.has(id));
    if (!others.every((id) => id.startsWith('indicator--'))) return undefined;
    return others.map((id) => id.slice('indicator--'.length));
  }
}

const EPOCH = '1970-01-01T00:00:00.000000Z';

/** A feed time one microsecond later (UTC text with six fraction digits). */
function plusMicrosecond(time: string): string {
  const milliseconds = Date.parse(time.slice(0, 23) + 'Z');
  const micros = Number(time.slice(23, 26)) + 1;
  const carried = micros === 1000 ? milliseconds + 1 : milliseconds;
  return `${new Date(carried).toISOString().slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;
}
