// Server-Sent Events framing (WHATWG HTML): `id:`, `event:`, `data:` fields, a blank
// line dispatches, lines starting with ':' are comments (the service's heartbeats).

export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;

  constructor(private readonly onMessage: (m: SseMessage) => void) {}

  // Text as decoded from the response body (a TextDecoder in streaming mode).
  push(text: string): void {
    this.buffer += text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      // A lone '\r' at the end may be the first half of "\r\n": wait for more.
      if (!m || (m[0] === '\r' && m.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length) this.onMessage({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') this.data.push(value);
    else if (name === 'event') this.event = value;
    else if (name === 'id' && !value.includes('\0')) this.id = value;
  }
}
