/**
 * The clock as an interface, so tests move time instead of waiting: production uses the system time,
 * tests advance a fake one. Everything that decides by time (quota month,
 * rate-limit windows, re-check schedule, retry schedule) takes a Clock.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class FakeClock implements Clock {
  constructor(private ms: number = Date.UTC(2026, 10, 5, 10, 0, 0)) {}
  now(): number {
    return this.ms;
  }
  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.ms += ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}
