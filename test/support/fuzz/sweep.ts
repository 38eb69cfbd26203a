// The order of a run: a deterministic sweep first, then random plans, some mutated or replayed.
import fc from "fast-check";
import { locations, setAt } from "./locations.ts";
import { mutations } from "./mutations.ts";
import type { Operation } from "./openapi.ts";
import { type Plan, validPlanArbitrary } from "./plans.ts";
import { Appended, RawSegment } from "./refs.ts";

/** Partner writes hold most of the logic (carts, purchases, top-ups): they get the most requests. */
export function operationWeight(op: Operation): number {
  if (!op.documented) return 1;
  if (op.area === "partner" && op.method === "POST") return 5;
  if (op.area === "partner") return 3;
  return 2;
}

/** Text that has broken servers before, put in every text field, path and query parameter by the sweep. */
export const SWEEP_TEXT = ["\u0000", "\uD800", "\u202E🚀"];
export const SWEEP_SEGMENTS = ["%zz", "%ED%A0%80", "x".repeat(300)];

/**
 * A deterministic sweep that does not depend on luck: for every operation, a valid request, then
 * that request with each hostile text in each of its text locations, and each hostile path segment
 * in each of its path parameters. Random runs then explore around it.
 */
export function sweepPlans(operations: Operation[], seed: number): Plan[] {
  const plans: Plan[] = [];
  for (const op of operations) {
    const [plan] = fc.sample(validPlanArbitrary(op), { seed, numRuns: 1 });
    if (!plan) continue;
    plans.push(plan);
    for (const location of locations(plan)) {
      for (const text of SWEEP_TEXT) {
        plans.push(setAt(plan, location, (v) => new Appended(v ?? "", text), "sweep"));
      }
    }
    for (const name of Object.keys(plan.pathParams)) {
      for (const raw of SWEEP_SEGMENTS) {
        plans.push({
          ...plan,
          pathParams: { ...plan.pathParams, [name]: new RawSegment(raw) },
          mutation: "sweep",
        });
      }
    }
  }
  return plans;
}

/** Every request of a run: an operation, then a valid plan, then (about half the time) one mutation. */
export function planArbitrary(operations: Operation[]): fc.Arbitrary<Plan> {
  return fc
    .oneof(...operations.map((op) => ({ weight: operationWeight(op), arbitrary: fc.constant(op) })))
    .chain((op) => validPlanArbitrary(op))
    .chain((plan) =>
      fc.oneof(
        { weight: 10, arbitrary: fc.constant(plan) },
        { weight: 10, arbitrary: fc.oneof(...mutations(plan)) },
        { weight: 1, arbitrary: fc.nat().map((replay) => ({ ...plan, replay, mutation: "replay" })) },
      ),
    );
}
