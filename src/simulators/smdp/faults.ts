// The SM-DP+ simulator's faults, set through POST /control; in memory (a property of the moment).
import { Type } from "typebox";

export type SmdpFaults = {
  /** Every ES2+ call answers HTTP 503, nothing done. */
  down: boolean;
  latency_ms: number;
  /** Share of calls answered HTTP 500 with nothing done. */
  fail_share: number;
  /** Share of calls done and committed, then the connection is dropped without an answer. */
  drop_share: number;
  /** Share of calls done, then answered with a wrong X-Admin-Protocol header. */
  bad_header_share: number;
  /** The functions the three shares apply to (null or empty: all). */
  functions: string[] | null;
  /**
   * Not a fault but a vendor's dialect: DownloadOrder of an ICCID not AVAILABLE answers 8.2.1/3.3
   * (SGP.22 5.3.1, the default) or 8.2.1/3.7, as some SM-DP+s do.
   */
  download_taken_reason: "3.3" | "3.7";
  callback_url: string | null;
  callback_token: string | null;
  callback_duplicate_share: number;
};

export const FaultsPatch = Type.Object(
  {
    down: Type.Optional(Type.Boolean()),
    latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    fail_share: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    drop_share: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    bad_header_share: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    functions: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10 }), Type.Null()]),
    ),
    download_taken_reason: Type.Optional(Type.Union([Type.Literal("3.3"), Type.Literal("3.7")])),
    callback_url: Type.Optional(
      Type.Union([Type.String({ pattern: "^https?://", maxLength: 2000 }), Type.Null()]),
    ),
    callback_token: Type.Optional(Type.Union([Type.String({ minLength: 8, maxLength: 500 }), Type.Null()])),
    callback_duplicate_share: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);
