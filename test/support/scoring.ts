/** A collection's `scoring` as its view shows it when none was given (extensions §18's defaults), spelled out. */
export const DEFAULT_SCORING_VIEW = {
  decay: {
    File: { lifetimeDays: 460, speed: 0.5 },
    DomainName: { lifetimeDays: 300, speed: 1 },
    URL: { lifetimeDays: 90, speed: 2 },
    IPAddress: { lifetimeDays: 60, speed: 2 },
    IPNetwork: { lifetimeDays: 180, speed: 1 },
  },
  threshold: 0,
  decayedAction: 'keep',
  taxiiViews: [],
};
