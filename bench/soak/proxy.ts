/**
 * A TCP proxy on loopback between one operator and the API server, whose link the soak can cut:
 * during a cut nothing passes on any connection, open or new (accepted, never answered), as a
 * partitioned network looks to a client; when the link is restored the connections that lived
 * through the cut are reset (their streams lost bytes) and new ones pass again.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CuttableProxy {
  readonly url: string;
  readonly isCut: boolean;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<CuttableProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let cut = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    track(client);
    if (cut) return; // black hole: the client waits for its own timeouts
    const server = connect({ host: upstream.hostname, port: Number(upstream.port) });
    track(server);
    // Bytes that arrive during a cut are dropped, not buffered.
    client.on('data', (chunk: Buffer) => cut || server.write(chunk));
    server.on('data', (chunk: Buffer) => cut || client.write(chunk));
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const resetAll = () => {
    for (const socket of sockets) socket.resetAndDestroy();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    get isCut() {
      return cut;
    },
    cut() {
      cut = true;
    },
    restore() {
      cut = false;
      resetAll(); // the black-holed connections end; clients reconnect through the open link
    },
    close: () =>
      new Promise<void>((resolve) => {
        resetAll();
        server.close(() => resolve());
      }),
  };
}
