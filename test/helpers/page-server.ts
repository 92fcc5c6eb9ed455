/**
 * A loopback web server for link-scan tests: pages with scripts and styles, slow pages, a page
 * that never finishes, a 5 MB page whose bytes written are counted on the server side.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const SECRET_SCRIPT_TEXT = "SCRIPT_PAYLOAD_must_never_reach_the_model";
export const SECRET_STYLE_TEXT = "STYLE_PAYLOAD_must_never_reach_the_model";

const PAGE = `<!doctype html><html><head><title>Cheap watches here</title>
<meta name="description" content="Buy replica watches now">
<style>.x { content: "${SECRET_STYLE_TEXT}" }</style>
<script>var s = "${SECRET_SCRIPT_TEXT}";</script></head>
<body><h1>Limited offer</h1><p>Free money, buy now, click the link.</p></body></html>`;

export interface PageServer {
  url: string;
  /** Requests seen per path. */
  hits: Map<string, number>;
  /** Bytes the server wrote for /big, counted on its sockets. */
  bigBytesWritten: () => number;
  stop(): Promise<void>;
}

export async function startPageServer(slowMs = 600): Promise<PageServer> {
  const hits = new Map<string, number>();
  let bigBytes = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === "/page" || path.startsWith("/page/")) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
    } else if (path.startsWith("/slow/")) {
      setTimeout(() => res.writeHead(200, { "content-type": "text/plain" }).end(`slow page ${path}: buy now, free money`), slowMs);
    } else if (path === "/hang") {
      res.writeHead(200, { "content-type": "text/html", "content-length": "1000000" });
      res.write("<html><body>never finished");
    } else if (path === "/big") {
      res.writeHead(200, { "content-type": "text/plain", "content-length": String(5 * 1024 * 1024) });
      const chunk = Buffer.alloc(16 * 1024, "a");
      let sent = 0;
      const socket = res.socket!;
      const startWritten = socket.bytesWritten;
      const timer = setInterval(() => {
        if (res.destroyed || socket.destroyed || sent >= 5 * 1024 * 1024) {
          clearInterval(timer);
          bigBytes = socket.bytesWritten - startWritten;
          res.end();
          return;
        }
        res.write(chunk);
        sent += chunk.length;
        bigBytes = socket.bytesWritten - startWritten;
      }, 2);
    } else if (path === "/image.png") {
      res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("no such page");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    bigBytesWritten: () => bigBytes,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
