/** Why a run failed when the fetch did not: a body that is not what its kind says. */
export class RunFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Thrown inside a run's transaction when its lease was taken over: nothing of the run is written. */
export class LeaseLost extends Error {
  constructor() {
    super('the run lost its lease to another instance');
  }
}
