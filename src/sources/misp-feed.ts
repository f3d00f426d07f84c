import type { ObjectKey } from '../common/indicators/indicators.js';
import { CLEAR, mostRestrictive, type TlpRank } from '../common/markings/tlp.js';
import { keyId, type FormatFailure, type FormatRecord } from '../formats/forms.js';
import { parseMispEvent, parseMispManifest } from '../formats/misp.js';
import { RunBytes, type FeedRequest, type FeedResult, type FeedState } from './source-feeds.js';
import { FetchFailure } from './source-fetch.js';

/** An event uuid as a file name of the feed's folder (no `/`, no `..`). */
const EVENT_NAME = /^[0-9A-Za-z-]{1,64}$/;

const failed = (failure: FormatFailure, where: string): FormatRecord => ({ kind: 'failed', failure: { ...failure, message: `${where}: ${failure.message}` } });

/**
 * A `misp` run (extensions §13): the folder's `manifest.json` (with the stored `ETag`/`Last-Modified`, so
 * an unchanged feed is a 304), then `<uuid>.json` of every event that is new or whose `timestamp` differs
 * from the one of the last success. The attributes of those events are the run's objects. A claim ends
 * when an attribute (or its object, or its event) is marked `deleted`, when an attribute is gone from a
 * re-fetched event, and when an event is gone from the manifest, unless another event of the feed still
 * gives the key: which keys each event gave is kept in the state with its timestamp. A manifest naming
 * nothing new is `notModified`. The source's headers (its `Auth-Key`) go with every request of the folder.
 * A key several events give is marked with the most restrictive of their `tlp:` tags (extensions §19), those
 * of the events not read again included: the state keeps each event's markings.
 */
export async function readMispFeed(request: FeedRequest): Promise<FeedResult> {
  const { settings, last } = request;
  const folder = settings.url.endsWith('/') ? settings.url : `${settings.url}/`;
  const bytes = new RunBytes(request.limits.maxBytes);
  const manifest = await request.policy.get(
    { url: new URL('manifest.json', folder).href, headers: request.headers, etag: last?.etag, lastModified: last?.lastModified },
    request.stop,
  );
  if (manifest.notModified) return manifest;
  const text = await bytes.text(manifest.body, manifest.bytes, manifest.httpStatus);
  const parsed = text.ok ? parseMispManifest(text.text) : text;
  const before = last?.state?.events ?? {};
  const listed = parsed.ok ? new Set(parsed.events.map((event) => event.uuid)) : new Set<string>();
  const due = parsed.ok ? parsed.events.filter((event) => before[event.uuid]?.timestamp !== event.timestamp) : [];
  const gone = Object.keys(before).filter((uuid) => !listed.has(uuid));
  if (parsed.ok && due.length === 0 && gone.length === 0) return { notModified: true, httpStatus: manifest.httpStatus };

  const end = { withdrawn: [] as ObjectKey[], state: {} as FeedState };
  async function* records(): AsyncGenerator<FormatRecord> {
    if (!parsed.ok) {
      yield failed(parsed.failure, 'manifest.json');
      return;
    }
    // `line`: the run's n-th item (attribute or manifest entry), as a line is a list's.
    let line = 0;
    for (const { value, reason } of parsed.rejected) yield { kind: 'rejected', rejection: { line: ++line, value, reason: `manifest.json: ${reason}` } };
    const events = Object.fromEntries(Object.entries(before).filter(([uuid]) => listed.has(uuid)));
    // The markings the events not read again still give their keys.
    const dueNow = new Set(due.map((entry) => entry.uuid));
    const held = new Map<string, TlpRank>();
    for (const [uuid, { marks = {} }] of Object.entries(events))
      if (!dueNow.has(uuid)) for (const [id, rank] of Object.entries(marks)) held.set(id, mostRestrictive([held.get(id), rank]));
    // Keys that may lose their claim: those of the events read again or gone, and the deleted attributes.
    const candidates = new Map<string, ObjectKey>();
    const candidate = (id: string) => {
      const [type, ...value] = id.split('\n');
      candidates.set(id, { type, value: value.join('\n') } as ObjectKey);
    };
    for (const uuid of gone) before[uuid].keys.forEach(candidate);
    for (const entry of due) {
      if (!EVENT_NAME.test(entry.uuid)) {
        yield { kind: 'rejected', rejection: { line: ++line, value: entry.uuid, reason: 'manifest.json: the event is not a file name' } };
        continue;
      }
      const file = await request.policy.get({ url: new URL(`${entry.uuid}.json`, folder).href, headers: request.headers }, request.stop);
      if (file.notModified) throw new FetchFailure('HttpStatus', 'the server answered 304 to a request without validators', 304);
      const body = await bytes.text(file.body, file.bytes, file.httpStatus);
      const event = body.ok ? parseMispEvent(body.text, { toIdsOnly: settings.toIdsOnly ?? true, context: settings.context }) : body;
      if (!event.ok) {
        yield failed(event.failure, `event ${entry.uuid}.json`);
        return;
      }
      before[entry.uuid]?.keys.forEach(candidate);
      for (const key of event.event.withdrawn) candidates.set(keyId(key), key);
      const keys = new Set<string>();
      const marks: Record<string, TlpRank> = {};
      for (const { form, tlp, credibility } of event.event.forms) {
        const ids = form.keys.map(keyId);
        ids.forEach((id) => keys.add(id));
        if (tlp !== undefined && tlp > CLEAR) for (const id of ids) marks[id] = mostRestrictive([marks[id], tlp]);
        const ranks = [tlp, ...ids.map((id) => held.get(id))];
        yield {
          kind: 'form',
          line: ++line,
          form,
          ...(ranks.some((rank) => rank !== undefined) && { tlp: mostRestrictive(ranks) }),
          ...(credibility !== undefined && { credibility }),
        };
      }
      for (const { value, reason } of event.event.rejected)
        yield { kind: 'rejected', rejection: { line: ++line, value, reason: `event ${entry.uuid}: ${reason}` } };
      events[entry.uuid] = { timestamp: entry.timestamp, keys: [...keys], ...(Object.keys(marks).length > 0 && { marks }) };
    }
    const current = new Set(Object.values(events).flatMap((event) => event.keys));
    end.withdrawn = [...candidates].filter(([id]) => !current.has(id)).map(([, key]) => key);
    end.state = { events };
  }
  return {
    notModified: false,
    httpStatus: manifest.httpStatus,
    etag: manifest.etag,
    lastModified: manifest.lastModified,
    records: records(),
    bytes: () => bytes.count,
    end,
  };
}
