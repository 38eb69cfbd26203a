// Work that may run only so many at once, per process and per key (a partner): a slot is taken
// when the work starts and given back when it ends, or refused at once when none is free. Nothing
// waits for a slot, so a refused request holds no database connection and no memory while it
// would have waited; the caller answers it (429 with Retry-After) and the client asks again.
import assert from "node:assert/strict";

/** Gives a slot back; a second call does nothing, so every way out of the work may call it. */
export type Release = () => void;

export class KeyedSlots {
  readonly #per_process: number;
  readonly #per_key: number;
  /** Slots held per key; a key holding none is not kept, so this has at most #per_process entries. */
  readonly #held = new Map<string, number>();
  #total = 0;

  constructor(per_process: number, per_key: number) {
    assert.ok(Number.isInteger(per_process) && per_process >= 1, "per_process: a whole number >= 1");
    assert.ok(Number.isInteger(per_key) && per_key >= 1, "per_key: a whole number >= 1");
    this.#per_process = per_process;
    this.#per_key = per_key;
  }

  /** A slot for `key`, or null when the process or the key holds all it may. */
  take(key: string): Release | null {
    const held = this.#held.get(key) ?? 0;
    if (this.#total >= this.#per_process || held >= this.#per_key) return null;
    this.#held.set(key, held + 1);
    this.#total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total -= 1;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left === 0) this.#held.delete(key);
      else this.#held.set(key, left);
      assert.ok(this.#total >= 0 && left >= 0, "a slot given back once");
    };
  }

  /** Slots held now, in all (metrics, tests). */
  get running(): number {
    return this.#total;
  }
}
