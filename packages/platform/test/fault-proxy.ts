// A TCP relay on loopback between the platform and a real server (PostgreSQL here), which a test
// can cut and restore: a database that goes away and comes back, without touching the shared
// server. Cut, every relayed connection is dropped and new ones are either closed at once
// ('refuse') or accepted and never answered ('silent', a host that stopped responding).
import net from 'node:net';

export interface FaultProxy {
  port: number;
  /** Connections refused since the last cut. */
  readonly refused: number;
  cut(mode?: 'refuse' | 'silent'): void;
  restore(): void;
  close(): Promise<void>;
}

export async function faultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<net.Socket>();
  let down: false | 'refuse' | 'silent' = false;
  let refused = 0;
  const server = net.createServer((client) => {
    client.on('error', () => {});
    if (down) {
      refused++;
      if (down === 'refuse') client.destroy();
      else {
        open.add(client);
        client.once('close', () => open.delete(client));
      }
      return;
    }
    const upstream = net.connect(target);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    open.add(client).add(upstream);
    client.once('close', () => open.delete(client));
    upstream.once('close', () => open.delete(upstream));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get refused() {
      return refused;
    },
    cut(mode = 'refuse') {
      down = mode;
      refused = 0;
      for (const s of open) s.destroy();
    },
    restore() {
      down = false;
    },
    close() {
      for (const s of open) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
