// A TCP relay on loopback between the platform and a real server (PostgreSQL here), which a test
// can cut (every relayed connection dropped, new ones closed at once) and restore: a database that
// goes away and comes back, without touching the shared server.
import net from 'node:net';

export interface FaultProxy {
  port: number;
  /** Connections refused since the last cut. */
  readonly refused: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function faultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<net.Socket>();
  let down = false;
  let refused = 0;
  const server = net.createServer((client) => {
    client.on('error', () => {});
    if (down) {
      refused++;
      client.destroy();
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
    cut() {
      down = true;
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
