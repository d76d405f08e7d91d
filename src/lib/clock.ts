/** The clock as an interface, so tests move time instead of waiting; code that waits takes Timers. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** One-shot timers, for code whose tests move time instead of waiting (the runtime's, or a {@link FakeClock}'s). */
export interface Timers {
  /** Calls `fn` once, `ms` milliseconds from now; returns a handle for {@link Timers.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** A clock tests move by hand; its timers fire as it passes their time, in time order. @internal test seam */
export class FakeClock implements Clock, Timers {
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  private nextTimer = 1;

  constructor(private ms: number = Date.UTC(2026, 10, 5, 10, 0, 0)) {}
  now(): number {
    return this.ms;
  }
  /** Moves the clock forward by `ms` milliseconds, firing the timers due on the way. */
  advance(ms: number): void {
    this.set(this.ms + ms);
  }
  /** Sets the time; moving forward fires the timers due on the way (each sees the clock at its own time). */
  set(ms: number): void {
    for (let due = this.nextDue(ms); due; due = this.nextDue(ms)) {
      this.timers.delete(due[0]);
      this.ms = Math.max(this.ms, due[1].at);
      due[1].fn();
    }
    this.ms = ms;
  }
  setTimeout(fn: () => void, ms: number): number {
    const id = this.nextTimer++;
    this.timers.set(id, { at: this.ms + Math.max(0, ms), fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  pendingTimers(): number {
    return this.timers.size;
  }
  /** The earliest timer due at or before `until` (the first set, among equals). */
  private nextDue(until: number): [number, { at: number; fn: () => void }] | undefined {
    let first: [number, { at: number; fn: () => void }] | undefined;
    for (const entry of this.timers) if (entry[1].at <= until && (!first || entry[1].at < first[1].at)) first = entry;
    return first;
  }
}
