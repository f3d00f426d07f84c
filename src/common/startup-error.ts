/**
 * A start-up failure the operator can fix: its message is one line that says what is wrong and what to do,
 * printed as it is (no stack trace) before the process exits.
 */
export class StartupError extends Error {}
