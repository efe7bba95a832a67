/**
 * What one seller of the fleet is: a path on its own loopback server, answered by a `node:http` listener or,
 * for sellers below HTTP, by a raw `node:net` socket handler.
 */
import type { RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import type { Address } from './constants.ts';

/** One seller, ready to be put on a port. */
export type SellerSpec =
  | { kind: 'http'; path: string; listener: RequestListener }
  | { kind: 'net'; path: string; onSocket: (socket: Socket) => void };

/** What every seller factory receives. */
export type SellerOptions = { payTo: Address };
