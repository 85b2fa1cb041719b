"""`trtwatch serve` against the HTTP standards, over raw sockets on loopback: limits on
what a client sends before it is authenticated, message framing (no request
smuggling), Host, HEAD, Expect, Content-Type, the graceful stop and the edges of event
streams. Each test names the rule it checks and the item of the second service-trust
issue it reproduces."""
import http.client
import json
import signal
import socket
import time

import pytest

from service_client import Server, SseReader, exchange, rss_kib

BUILD = json.dumps({"simulate": "small-cnn", "speed": 8}).encode()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path).start()
    yield s
    s.stop()


def head(lines, host=True):
    """A request head from its lines (the request line first), Host added."""
    lines = list(lines)
    if host:
        lines.insert(1, "Host: 127.0.0.1")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunked(body):
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


def build_count(server):
    return len(server.request("GET", "/builds?limit=200")[1]["builds"])


def refused_and_closed(port, data, status):
    statuses, received, closed = exchange(port, data)
    assert statuses == [status], received[:300]
    assert closed, "the connection stays open after the refusal"
    return json.loads(received.partition(b"\r\n\r\n")[2])["error"]


# Item 2, RFC 9112 §7.1.1: a chunk extension that never ends is cut off at a bound: the
# service answers 400 and closes, and four such connections leave its memory as it was.
def test_endless_chunk_extension_is_refused_with_bounded_memory(server):
    start = head(["POST /builds HTTP/1.1", "Content-Type: application/json", "Transfer-Encoding: chunked"]) + b"2;"
    piece = b"x" * 65536
    before = rss_kib(server.proc.pid)
    sockets = []
    for _ in range(4):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        sockets.append(s)
        try:
            s.sendall(start)
            for _ in range(256):  # 16 MiB per connection (more than the socket buffers), unless closed first
                s.sendall(piece)
        except OSError:
            pass
    time.sleep(1)  # what the socket buffers still hold reaches the service
    grown_mib = (rss_kib(server.proc.pid) - before) / 1024
    for s in sockets:
        s.close()
    assert grown_mib < 16, f"the service grew {grown_mib:.0f} MiB"
    error = refused_and_closed(server.port, start + b"x" * 40000, 400)
    assert "RFC 9112 §7.1.1" in error
    assert server.request("GET", "/healthz")[0] == 200


# Item 2: trailers are bounded like the head.
def test_oversized_trailers_are_refused(server):
    data = head(["POST /builds HTTP/1.1", "Content-Type: application/json", "Transfer-Encoding: chunked"])
    data += b"%x\r\n%s\r\n0\r\n" % (len(BUILD), BUILD) + b"".join(b"X-T%d: %s\r\n" % (i, b"v" * 100)
                                                                   for i in range(400)) + b"\r\n"
    statuses, _, closed = exchange(server.port, data)
    assert statuses and statuses[0] in (400, 431) and closed


# Item 2/6, RFC 6585 §5 and RFC 9112 §3: too many or too large header fields: 431; a
# target too long: 414 (not 400), the connection closed.
@pytest.mark.parametrize("data, status", [
    (head(["GET /healthz HTTP/1.1"] + [f"X-Field-{i}: v" for i in range(200)]), 431),
    (head(["GET /healthz HTTP/1.1", "X-Big: " + "v" * 20000]), 431),
    (head(["GET /healthz?" + "a" * 10000 + " HTTP/1.1"]), 414),
    (head(["GET /healthz?" + "a" * 20000 + " HTTP/1.1"]), 414),
], ids=["many-fields", "big-field", "long-target", "target-beyond-the-head-limit"])
def test_head_limits_answer_431_and_414(server, data, status):
    refused_and_closed(server.port, data, status)


# Item 2: with --token-file, an unauthenticated body is never read: 401 at once, even
# when the client waits for 100 Continue (RFC 9110 §10.1.1: a final status instead).
def test_unauthenticated_body_is_not_read(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("0123456789abcdef0123456789abcdef\n")
    token_file.chmod(0o600)
    s = Server(tmp_path, "--token-file", str(token_file)).start()
    try:
        data = head(["POST /builds HTTP/1.1", "Content-Type: application/json", "Content-Length: 60000",
                     "Expect: 100-continue"])
        refused_and_closed(s.port, data, 401)
    finally:
        s.stop()


# Item 3, RFC 9112 §6.1/§6.3/§7: a Transfer-Encoding that does not end in chunked
# (once), or comes with Content-Length, is refused and the connection closed: the body
# is never taken as a second request.
SMUGGLED = head(["POST /builds HTTP/1.1", "Content-Type: application/json", f"Content-Length: {len(BUILD)}"]) + BUILD


@pytest.mark.parametrize("fields", [
    ["Transfer-Encoding: identity"],
    ["Transfer-Encoding: gzip"],
    ["Transfer-Encoding: chunked, identity"],
    ["Transfer-Encoding: CHUNKED , gzip"],
    ["Transfer-Encoding: chunked, chunked"],
    ["Transfer-Encoding: chunked", "Transfer-Encoding: identity"],
    ["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"],
    ["Transfer-Encoding: chunked,", " identity"],  # obs-fold
    ["Transfer-Encoding: ,"],
    ["Transfer-Encoding: chunked", f"Content-Length: {len(SMUGGLED)}"],
    ["Transfer-Encoding: identity", f"Content-Length: {len(SMUGGLED)}"],
])
def test_transfer_encoding_not_ending_in_chunked_is_refused(server, fields):
    before = build_count(server)
    error = refused_and_closed(server.port, head(["GET /healthz HTTP/1.1"] + fields) + SMUGGLED, 400)
    assert "RFC 9112" in error
    assert build_count(server) == before


# Item 3, RFC 9112 §6.1: a coding other than chunked is not implemented: 501, closed.
def test_unknown_transfer_coding_before_chunked_is_501(server):
    before = build_count(server)
    data = head(["POST /builds HTTP/1.1", "Content-Type: application/json", "Transfer-Encoding: gzip, chunked"])
    refused_and_closed(server.port, data + chunked(BUILD), 501)
    assert build_count(server) == before


# Item 3: chunked alone, in any case and spacing, is the body.
def test_chunked_in_any_case_is_accepted(server):
    data = head(["POST /builds HTTP/1.1", "Content-Type: application/json", "Transfer-Encoding:  Chunked ",
                 "Connection: close"])
    statuses, _, _ = exchange(server.port, data + chunked(BUILD))
    assert statuses == [201]


# Item 6, RFC 9112 §3.2: exactly one Host in HTTP/1.1; HTTP/1.0 may send none.
def test_host_must_be_sent_once(server):
    refused_and_closed(server.port, head(["GET /healthz HTTP/1.1", "Host: evil.example"]), 400)
    refused_and_closed(server.port, head(["GET /healthz HTTP/1.1"], host=False), 400)
    statuses, _, _ = exchange(server.port, head(["GET /healthz HTTP/1.0"], host=False))
    assert statuses == [200]


# Item 6, RFC 9110 §9.3.2: HEAD is GET without the body, Content-Length included; on
# one keep-alive connection the next response is intact.
def test_head_is_get_without_the_body(server):
    done = server.submit({"simulate": "small-cnn", "speed": 8})
    server.wait_status(done["id"], ["succeeded"])
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    for path in ["/healthz", "/openapi.json", "/builds", f"/builds/{done['id']}", "/"]:
        conn.request("GET", path)
        res = conn.getresponse()
        body = res.read()
        conn.request("HEAD", path)
        head_res = conn.getresponse()
        assert head_res.status == res.status == 200, path
        assert head_res.read() == b""
        assert int(head_res.getheader("Content-Length")) == len(body), path
    conn.request("HEAD", f"/builds/{done['id']}/events")
    res = conn.getresponse()
    assert res.status == 200 and res.getheader("Content-Type").startswith("text/event-stream")
    res.read()
    conn.request("GET", "/healthz")
    assert conn.getresponse().status == 200
    conn.close()


# Item 6, RFC 9110 §10.1.1: 100 Continue before the body of an acceptable request; a
# final status instead for one refused on its head; 417 for an unknown expectation.
def test_expect_100_continue(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(head(["POST /builds HTTP/1.1", "Content-Type: application/json",
                        f"Content-Length: {len(BUILD)}", "Expect: 100-continue", "Connection: close"]))
        assert s.recv(4096).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        s.sendall(BUILD)
        assert s.recv(4096).startswith(b"HTTP/1.1 201 ")
    too_large = head(["POST /builds HTTP/1.1", "Content-Type: application/json", "Content-Length: 100000",
                      "Expect: 100-continue"])
    refused_and_closed(server.port, too_large, 413)
    refused_and_closed(server.port, head(["GET /healthz HTTP/1.1", "Expect: teapot"]), 417)


# Item 6, RFC 9110 §15.5.16: JSON bodies need Content-Type application/json (case and
# parameters aside): 415 naming it otherwise, for the API, the sign-in and /mcp.
def test_json_bodies_need_a_json_content_type(server):
    before = build_count(server)
    for path in ["/builds", "/ui/session", "/mcp", f"/builds/b_{'0' * 32}/cancel"]:
        for content_type in ["text/plain", "application/jsonx", None]:
            fields = [f"POST {path} HTTP/1.1", f"Content-Length: {len(BUILD)}"]
            if content_type:
                fields.append(f"Content-Type: {content_type}")
            error = refused_and_closed(server.port, head(fields) + BUILD, 415)
            assert "application/json" in error, (path, content_type)
    assert build_count(server) == before
    status, _, _ = server.request("POST", "/builds", raw=BUILD, headers={"Content-Type": "Application/JSON; charset=utf-8"})
    assert status == 201


# Item 6: during a graceful stop the service still answers: health 503 "stopping",
# reads served, new builds 503 with Retry-After, until the last build has ended.
def test_graceful_stop_keeps_answering(tmp_path):
    s = Server(tmp_path, "--on-shutdown", "finish").start()
    try:
        doc = s.submit({"simulate": "large-transformer", "speed": 1})
        s.wait_status(doc["id"], ["running"])
        s.proc.send_signal(signal.SIGTERM)  # a second one, from stop(), kills the build
        deadline = time.time() + 10
        while "stopping" not in s.log() and time.time() < deadline:
            time.sleep(0.02)
        status, body, hdrs = s.request("GET", "/healthz")
        assert status == 503 and body["status"] == "stopping" and hdrs.get("Retry-After")
        assert s.request("GET", f"/builds/{doc['id']}")[0] == 200
        status, _, hdrs = s.request("POST", "/builds", {"simulate": "small-cnn"})
        assert status == 503 and hdrs.get("Retry-After")
    finally:
        s.stop()


def stream_refusal(port, path, last_event_id=None):
    """GET of an event stream that the service refuses: (status, error)."""
    fields = [f"GET {path} HTTP/1.1"] + ([f"Last-Event-ID: {last_event_id}"] if last_event_id else [])
    statuses, received, _ = exchange(port, head(fields))
    assert len(statuses) == 1, received[:300]
    return statuses[0], received.partition(b"\r\n\r\n")[2].decode()


# Item 7: Last-Event-ID is decimal digits within the seq type (0 to 2^64-1). An id
# beyond a live build's last event is refused, not a stream that silently skips events;
# at or past the end of a finished build it gets the ending (issue 36: a reconnecting
# client always learns that the build ended).
def test_last_event_id_range_and_ids_ahead_of_the_build(server):
    done = server.submit({"simulate": "small-cnn", "speed": 8})
    server.wait_status(done["id"], ["succeeded"])
    for value, words in [("18446744073709551616", "digits only"), ("+5", "digits only")]:
        status, body = stream_refusal(server.port, done["events_url"], value)
        assert status == 400 and words in body, (value, body)
    for value in ("9223372036854775808", "18446744073709551615"):
        ending = SseReader(server.port, done["events_url"], last_event_id=value).read_all()
        assert [e["event"] for e in ending] == ["build_finish"], (value, ending)
    live = server.submit({"simulate": "large-transformer", "speed": 4})
    server.wait_status(live["id"], ["running"])
    status, body = stream_refusal(server.port, live["events_url"], "100000000")
    assert status == 400 and "ahead" in body
    server.request("POST", f"/builds/{live['id']}/cancel")


# Item 7: the event stream refuses unknown query parameters, as GET /builds does.
def test_events_refuse_unknown_query_parameters(server):
    doc = server.submit({"simulate": "small-cnn", "speed": 8})
    status, body = stream_refusal(server.port, doc["events_url"] + "?colour=red")
    assert status == 400 and "cancel_on_disconnect" in body


# Issue 39, item 2: a burst of event-stream clients (all connected before the service
# reads any of them) is taken from the listen backlog in batches; every one of them
# gets its response head (RFC 9112 §2.1: status line, fields, empty line) and its
# stream, none is dropped or answered twice.
def test_a_burst_of_event_stream_clients_all_get_their_stream(server):
    request = head(["GET /builds/changes HTTP/1.1", "Accept: text/event-stream"])
    sockets = []
    try:
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            s.sendall(request)
            sockets.append(s)
        for s in sockets:
            received = b""
            while b"\n\n" not in received.partition(b"\r\n\r\n")[2]:
                chunk = s.recv(4096)
                assert chunk, "the stream closed before its head: " + received[:200].decode()
                received += chunk
            status, _, rest = received.partition(b"\r\n")
            assert status == b"HTTP/1.1 200 OK", received[:300]
            assert b"Content-Type: text/event-stream" in rest.partition(b"\r\n\r\n")[0]
            assert rest.partition(b"\r\n\r\n")[2].startswith(b"retry: 2000\n\n")
    finally:
        for s in sockets:
            s.close()
    assert server.request("GET", "/healthz")[0] == 200  # and it still answers
