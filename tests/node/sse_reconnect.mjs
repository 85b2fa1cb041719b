// A real EventSource client (npm eventsource@4) on a trtwatch build's event stream.
// Its first connection is cut after CUT events; EventSource reconnects by itself with
// Last-Event-ID. After build_finish (which carries "retry: 86400000") the server ends the
// stream; the client waits a day before it would reconnect, so no request follows
// within QUIET ms of the ending. Prints one JSON summary line.
// Usage: node sse_reconnect.mjs URL CUT
import { readFileSync } from "node:fs";
import { EventSource } from "eventsource";

const [url, cutArg] = process.argv.slice(2);
const cut = Number(cutArg);
const received = [];
const requests = [];  // Last-Event-ID sent with each connection (null for none)
let cutDone = false;

const es = new EventSource(url, {
  fetch: async (input, init) => {
    const headers = new Headers(init.headers);
    requests.push(headers.get("last-event-id"));
    const res = await fetch(input, init);
    if (requests.length !== 1 || !res.body) return res;
    const reader = res.body.getReader();
    const body = new ReadableStream({
      async pull(controller) {
        if (received.length >= cut) {
          cutDone = true;
          controller.error(new Error("cut by the test"));
          reader.cancel().catch(() => {});
          return;
        }
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  },
});

// Every event type of the protocol, from its schema: EventSource delivers a named event
// only to a listener of that name, so a type missing here would look like a lost event.
const schema = JSON.parse(readFileSync(new URL("../../docs/events.schema.json", import.meta.url), "utf8"));
const types = schema.oneOf.map((event) => event.properties.type.const);
let finished = false;
let finishedAt = 0;
const QUIET = 6000;  // three times the stream's own retry: 2000
for (const type of types) {
  es.addEventListener(type, (m) => {
    const data = JSON.parse(m.data);
    received.push({ id: Number(m.lastEventId), type, seq: data.seq, dataType: data.type });
    if (type === "build_finish") {
      finished = true;
      finishedAt = Date.now();
    }
  });
}

const deadline = Date.now() + 120000;
const timer = setInterval(() => {
  if ((finished && Date.now() - finishedAt > QUIET) || Date.now() > deadline) {
    clearInterval(timer);
    es.close();
    console.log(JSON.stringify({ received, requests, cutDone, finished, readyState: es.readyState }));
  }
}, 50);
