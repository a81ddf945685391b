// SPDX-License-Identifier: MIT
/** What a SAGL query says (the server's JSON). */
export interface QueryResult {
  query: number;
  name: string;
  version: string;
  protocol: number;
  players?: {
    online: number;
    max: number;
    list?: { id: number; name: string; score: number; ping: number }[];
    truncated?: true;
  };
  branding: {
    logo: { sha256: string; size: number } | null;
    primary: string | null;
    secondary: string | null;
    showName: boolean;
  };
  description?: string;
  gamemode?: string;
  language?: string;
  tags?: string[];
  links?: Record<string, string>;
  values?: Record<string, string | number | boolean | null>;
}

/** Why a query failed (SaglError.code). */
export type SaglErrorCode =
  /** No complete answer within the timeout (or its parsing ended after it). */
  | "SAGL_TIMEOUT"
  /** The server answers only with challenges (a 3rd new token, or nothing else until the timeout). */
  | "SAGL_ONLY_CHALLENGES"
  /** The JSON is invalid, not an object, or over a cap; or a claimed JSON or logo size is over its cap. */
  | "SAGL_BAD_ANSWER"
  /** The logo does not match its SHA-256. */
  | "SAGL_BAD_LOGO";

/** A failed query; DNS and socket errors are passed on as Node gives them. */
export class SaglError extends Error {
  readonly name: "SaglError";
  readonly code: SaglErrorCode;
  constructor(code: SaglErrorCode, message: string, options?: { cause?: unknown });
}

/** The caps on what a server can make the client hold or parse. */
export const limits: Readonly<{
  /** The JSON's total length: 4 MiB. */
  maxJSON: number;
  /** Nesting of arrays and objects in the JSON: 64. */
  maxJSONDepth: number;
  /** `{`, `[` and `,` outside strings in the JSON: 131,072. */
  maxJSONItems: number;
  /** The logo's size: 16 MiB. */
  maxLogo: number;
  /** The 3rd challenge with a new token in one call fails it. */
  challengeRounds: number;
}>;

/**
 * Asks a SAGL server over UDP; rejects with a SaglError if it does not
 * answer within `timeout` ms (default 1500, for the info and again for the
 * logo) or answers with something the client refuses.
 */
export function queryServer(
  host: string,
  port?: number,
  options?: { timeout?: number; logo?: boolean },
): Promise<{ info: QueryResult; ping: number; logo: Buffer | null }>;

/** Builds one 64-byte request (kind 1 info, 2 logo). */
export function encodeRequest(kind: number, token?: number, offset?: number): Buffer;
