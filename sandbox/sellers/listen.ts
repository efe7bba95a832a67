/**
 * Puts one seller on its own loopback port (OS-assigned) and takes it down again without leaks: a hanging or
 * dripping seller holds sockets open forever, so closing destroys every socket the server ever accepted.
 */
import { createServer as createHttpServer, Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import type { SellerSpec } from './types.ts';

/** A seller listening on a port. */
export type Listening = { url: string; close: () => Promise<void> };

/** Starts `spec` on `host`, port 0. */
export async function listenSeller(spec: SellerSpec, host: string): Promise<Listening> {
  const server: Server =
    spec.kind === 'http' ? createHttpServer(spec.listener) : createNetServer(spec.onSocket);
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('sandbox: seller has no TCP address');
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostPart}:${address.port}${spec.path}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        if (server instanceof HttpServer) server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      }),
  };
}
