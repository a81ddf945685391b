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

/** Asks a SAGL server over UDP; rejects if it does not answer. */
export function queryServer(
  host: string,
  port?: number,
  options?: { timeout?: number; logo?: boolean },
): Promise<{ info: QueryResult; ping: number; logo: Buffer | null }>;

/** Builds one 64-byte request (kind 1 info, 2 logo). */
export function encodeRequest(kind: number, token?: number, offset?: number): Buffer;
