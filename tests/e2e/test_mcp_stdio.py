"""`trtwatch mcp` at the JSON-RPC line level: the edge cases an SDK client hides."""
import json
import queue
import re
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import BIN


class McpProcess:
    """A `trtwatch mcp` child; one JSON-RPC message per line each way."""

    def __init__(self, data_dir, *extra):
        self.proc = subprocess.Popen([BIN, "mcp", "--data-dir", str(data_dir), *extra], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines = queue.Queue()
        self.raw = []  # every stdout line, to check that stdout carries only the protocol
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 100

    def _read(self):
        for line in self.proc.stdout:
            self.raw.append(line)
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def send_text(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def send(self, message):
        self.send_text(json.dumps(message))

    def receive(self, timeout=30):
        message = self.lines.get(timeout=timeout)
        assert message is not None, "the server closed stdout"
        return message

    def request(self, method, params=None, timeout=30):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        while True:
            m = self.receive(timeout)
            if m.get("id") == rid:
                return m

    def initialize(self, version="2025-11-25"):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "raw-test", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def call(self, name, arguments, timeout=60):
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout)["result"]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def mcp(tmp_path):
    m = McpProcess(tmp_path / "data")
    yield m
    m.close()
    for line in m.raw:
        json.loads(line)  # stdout carried nothing but JSON-RPC messages


def test_parse_error_then_the_server_carries_on(mcp):
    mcp.send_text("{this is not json")
    r = mcp.receive()
    assert r["id"] is None and r["error"]["code"] == -32700
    assert "not valid JSON" in r["error"]["message"]
    assert mcp.request("ping") == {"jsonrpc": "2.0", "id": mcp.next_id, "result": {}}


@pytest.mark.parametrize("text,code", [
    ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),   # batches are gone since 2025-06-18
    ('{"id": 1, "method": "ping"}', -32600),                      # no "jsonrpc": "2.0"
    ('{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600), # MCP ids are never null
    ('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}', -32602),
    ('"ping"', -32600),
])
def test_invalid_requests_are_json_rpc_errors(mcp, text, code):
    mcp.send_text(text)
    assert mcp.receive()["error"]["code"] == code


def test_only_ping_before_initialize(mcp):
    assert mcp.request("tools/list")["error"]["code"] == -32600
    assert "initialize first" in mcp.request("tools/list")["error"]["message"]
    assert mcp.request("ping")["result"] == {}


@pytest.mark.parametrize("asked,answered,structured", [
    ("2025-11-25", "2025-11-25", True),
    ("2025-06-18", "2025-06-18", True),
    ("2025-03-26", "2025-03-26", False),
    ("2024-11-05", "2024-11-05", False),
    ("2099-01-01", "2025-11-25", True),  # unknown: the server offers its latest
])
def test_version_negotiation(mcp, asked, answered, structured):
    r = mcp.initialize(asked)["result"]
    assert r["protocolVersion"] == answered
    assert r["capabilities"]["tools"] == {"listChanged": False}
    tools = mcp.request("tools/list")["result"]["tools"]
    assert all(("outputSchema" in t) == structured for t in tools)
    assert mcp.request("initialize", {"protocolVersion": asked})["error"]["code"] == -32600  # only once


def test_unknown_method_unknown_notification_and_stray_cancel(mcp):
    mcp.initialize()
    mcp.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})
    mcp.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 424242}})
    r = mcp.request("resources/list")  # the next message is this answer: the notifications got none
    assert r["error"]["code"] == -32601 and "tools/call" in r["error"]["message"]


def test_tool_call_params_errors(mcp):
    mcp.initialize()
    assert mcp.request("tools/call", {})["error"]["code"] == -32602
    assert mcp.request("tools/call", {"name": "nope"})["error"]["code"] == -32602
    assert mcp.request("tools/call", {"name": "get_build", "arguments": [1]})["error"]["code"] == -32602
    r = mcp.call("list_builds", {"limit": 0})
    assert r["isError"] is True and "limit" in r["content"][0]["text"]


def test_progress_then_cancel_gets_no_response_and_a_cancelled_record(mcp):
    mcp.initialize()
    mcp.send({"jsonrpc": "2.0", "id": "build-1", "method": "tools/call",
              "params": {"name": "build_engine", "arguments": {"simulate": "large-transformer", "speed": 4},
                         "_meta": {"progressToken": "tok-1"}}})
    progress = []
    while len(progress) < 4:
        m = mcp.receive()
        assert m.get("method") == "notifications/progress", m
        assert m["params"]["progressToken"] == "tok-1"
        progress.append(m["params"])
    values = [p["progress"] for p in progress]
    assert values == sorted(values) and len(set(values)) == len(values)
    mcp.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": "build-1", "reason": "raw test"}})
    builds = mcp.call("list_builds", {"limit": 1})["structuredContent"]["builds"]
    deadline = time.monotonic() + 60
    while True:
        record = mcp.call("get_build", {"id": builds[0]["id"]})["structuredContent"]
        if record["status"] == "cancelled" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert record["status"] == "cancelled" and record["cancel"]["reason"] == "api"
    assert "raw test" in record["cancel"]["message"]
    time.sleep(1)
    leftovers = []
    while not mcp.lines.empty():
        leftovers.append(mcp.lines.get())
    assert not [m for m in leftovers if m and m.get("id") == "build-1"]  # a cancelled request gets no response
    assert not [m for m in leftovers if m and m.get("method") == "notifications/progress"]


def test_a_long_line_is_refused_and_the_session_goes_on(mcp):
    mcp.send_text('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + "x" * (5 << 20) + '"}}')
    assert mcp.receive()["error"]["code"] == -32600
    assert mcp.request("ping")["result"] == {}


def test_server_budget(tmp_path):
    m = McpProcess(tmp_path / "data", "--max-build-time", "1s")
    m.initialize()
    r = m.call("build_engine", {"simulate": "large-transformer", "timeout": "1h"})
    assert r["isError"] and r["structuredContent"]["cancel"]["reason"] == "budget"
    assert "server's maximum build time" in r["structuredContent"]["error"]
    m.close()


def test_stdin_eof_cancels_running_builds(tmp_path):
    m = McpProcess(tmp_path / "data")
    m.initialize()
    started = m.call("build_engine", {"simulate": "large-transformer", "wait": False})["structuredContent"]
    # Wait until the worker streams events (its signal handlers are installed by then): a
    # SIGTERM before that kills it outright and the manager records "failed" (a
    # BuildManager race that REST cancels share).
    deadline = time.monotonic() + 60
    while m.call("get_build", {"id": started["id"]})["structuredContent"]["events"] < 3:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    t0 = time.monotonic()
    assert m.close() == 0  # stdin closed: the running build is cancelled and the server exits
    assert time.monotonic() - t0 < 20
    again = McpProcess(tmp_path / "data")
    again.initialize()
    record = again.call("get_build", {"id": started["id"]})["structuredContent"]
    assert record["status"] == "cancelled" and record["cancel"]["reason"] == "signal"  # as the stream says
    again.close()


def test_a_build_an_agent_ran_is_in_the_rest_api(tmp_path):
    m = McpProcess(tmp_path / "data")
    m.initialize()
    record = m.call("build_engine", {"simulate": "small-cnn", "speed": 8})["structuredContent"]
    assert record["status"] == "succeeded"
    m.close()
    serve = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data")],
                             stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r"listening on http://127\.0\.0\.1:(\d+)", serve.stderr.readline()).group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/builds/{record['id']}", timeout=10) as resp:
            rest = json.load(resp)
        assert rest["status"] == "succeeded" and rest["id"] == record["id"] and rest["events"] == record["events"]
    finally:
        serve.terminate()
        serve.wait(timeout=30)


def test_build_engine_as_a_task_polled_to_its_result(mcp):
    init = mcp.initialize()["result"]
    assert init["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    tools = {t["name"]: t for t in mcp.request("tools/list")["result"]["tools"]}
    assert tools["build_engine"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["get_build"]

    created = mcp.request("tools/call", {"name": "build_engine", "task": {"ttl": 60000},
                                         "arguments": {"simulate": "small-cnn", "speed": 5}})["result"]
    task = created["task"]
    assert task["status"] == "working" and task["taskId"].startswith("b_") and task["pollInterval"] > 0
    assert task["createdAt"].endswith("Z") and task["ttl"] is None
    seen = set()
    deadline = time.time() + 60
    while task["status"] == "working":
        assert time.time() < deadline
        seen.add(task["statusMessage"])
        time.sleep(0.2)
        task = mcp.request("tasks/get", {"taskId": task["taskId"]})["result"]
    assert task["status"] == "completed" and "succeeded" in task["statusMessage"]
    assert any("›" in message or "Building" in message for message in seen), seen  # the phase, while it ran
    result = mcp.request("tasks/result", {"taskId": task["taskId"]})["result"]
    assert result["isError"] is False and result["structuredContent"]["status"] == "succeeded"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert task["taskId"] in [t["taskId"] for t in mcp.request("tasks/list")["result"]["tasks"]]
    # A finished task cannot be cancelled; a tool that does not run as a task says so.
    assert mcp.request("tasks/cancel", {"taskId": task["taskId"]})["error"]["code"] == -32602
    refused = mcp.request("tools/call", {"name": "get_build", "task": {}, "arguments": {"id": task["taskId"]}})
    assert refused["error"]["code"] == -32601 and "does not run as a task" in refused["error"]["message"]


def test_tasks_result_waits_and_tasks_cancel_cancels(mcp):
    mcp.initialize()
    task = mcp.request("tools/call", {"name": "build_engine", "task": {},
                                      "arguments": {"simulate": "large-transformer"}})["result"]["task"]
    # tasks/result blocks until the task is over: ask first, cancel from the same session.
    mcp.next_id += 1
    waiting_id = mcp.next_id
    mcp.send({"jsonrpc": "2.0", "id": waiting_id, "method": "tasks/result", "params": {"taskId": task["taskId"]}})
    time.sleep(1)
    cancelled = mcp.request("tasks/cancel", {"taskId": task["taskId"]})["result"]
    assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task["taskId"]
    while True:
        m = mcp.receive(60)
        if m.get("id") == waiting_id:
            break
    record = m["result"]["structuredContent"]
    assert m["result"]["isError"] is True
    assert record["status"] == "cancelled" and record["cancel"]["reason"] == "api"
    assert "tasks/cancel" in record["cancel"]["message"]
    assert mcp.request("tasks/get", {"taskId": task["taskId"]})["result"]["status"] == "cancelled"
    assert mcp.request("tasks/get", {"taskId": "b_nope"})["error"]["code"] == -32602
    assert mcp.request("tasks/get", {})["error"]["code"] == -32602


def test_tasks_belong_to_2025_11_25(mcp):
    init = mcp.initialize("2025-06-18")["result"]
    assert "tasks" not in init["capabilities"]
    assert all("execution" not in t for t in mcp.request("tools/list")["result"]["tools"])
    assert mcp.request("tasks/list")["error"]["code"] == -32601


def test_progress_messages_and_the_result_carry_the_eta_from_earlier_builds(mcp):
    """docs/mcp.md: with enough earlier builds of the key in the history, the progress
    message ends with the ETA in the terminal's words, and the result's record has it."""
    mcp.initialize()
    build = {"simulate": "small-cnn", "speed": 3}
    for seed in range(1, 5):
        done = mcp.call("build_engine", {**build, "seed": seed})
        assert done["structuredContent"]["status"] == "succeeded", done
    mcp.send({"jsonrpc": "2.0", "id": "fifth", "method": "tools/call",
              "params": {"name": "build_engine", "arguments": {**build, "seed": 5},
                         "_meta": {"progressToken": "eta"}}})
    messages = []
    while True:
        m = mcp.receive(timeout=60)
        if m.get("id") == "fifth":
            result = m["result"]
            break
        if m.get("method") == "notifications/progress":
            messages.append(m["params"]["message"])
    said = [text for text in messages if "left" in text and "4 earlier builds" in text]
    assert said, messages
    assert "; about " in said[0], said[0]
    estimate = result["structuredContent"]["estimate"]
    assert estimate["based_on"] == {"builds": 4, "match": "exact"} and estimate["remaining"] is not None, estimate
