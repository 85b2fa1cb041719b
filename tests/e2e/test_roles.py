"""Issue 38 item 3: users and roles. A real `trtwatch serve --users FILE --token-file F`
with a viewer, two builders and an admin made by `trtwatch user add`; every route and
method of the route table (src/service/route_table.h, so that a new route without a
rule fails here) asked by nobody, a viewer, a builder and an admin. No credentials:
401 with WWW-Authenticate (RFC 9110 §11.6.1); a known user whose role is too low: 403
(RFC 9110 §15.5.4) naming the role needed; ownership of builds and models; a trusted
proxy's identity header."""
import http.client
import json
import os
import re
import stat
import time

import pytest

from conftest import SOURCE_DIR, run
from service_client import Server

TABLE = (SOURCE_DIR / "src" / "service" / "route_table.h").read_text()
ROLES = ["viewer", "builder", "admin"]
# The role each access of the table needs, by method (src/service/roles.h).
NEEDED = {
    "kPublic": lambda method: None,
    "kViewer": lambda method: "viewer",
    "kReadWrite": lambda method: "viewer" if method in ("GET", "HEAD") else "builder",
    "kBuilder": lambda method: "builder",
    "kAdmin": lambda method: "admin",
}
NO_BUILD = "b_" + "0" * 32
NO_GROUP = "g_" + "0" * 32


def table_routes():
    """(method, concrete path, access) for every method of every line of the table."""
    routes = []
    for methods, pattern, access in re.findall(r'ROUTE\("([A-Z, ]+)",\s*"([^"]+)",\s*\w+,\s*(\w+),', TABLE):
        path = (pattern.replace("{id}", NO_BUILD).replace("{gid+}", NO_GROUP).replace("{name}", "nomodel")
                .replace("{file}", "nofile.onnx"))
        for method in (m.strip() for m in methods.split(",")):
            routes.append((method, path, access))
    return routes


def add_user(users_file, name, role):
    r = run("user", "add", name, "--role", role, "--users", str(users_file))
    assert r.returncode == 0, r.stderr
    assert "will not be shown again" in r.stderr
    token = r.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", token), r.stdout
    return token


def ask(server, method, path, token=None, headers=None, body=None):
    """(status, parsed body or None, headers); an event stream's body is not read."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    data = None
    if method in ("POST", "PUT"):
        data = json.dumps(body if body is not None else {})
        hdrs.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=hdrs)
    res = conn.getresponse()
    got = dict(res.getheaders())
    parsed = None
    if "text/event-stream" not in got.get("Content-Type", "") and method != "HEAD":
        text = res.read().decode(errors="replace")
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
    conn.close()
    return res.status, parsed, got


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("roles")
    users_file = tmp / "users"
    tokens = {name: add_user(users_file, name, role)
              for name, role in [("vera", "viewer"), ("bo", "builder"), ("bea", "builder"), ("ada", "admin")]}
    assert stat.S_IMODE(os.stat(users_file).st_mode) == 0o600
    token_file = tmp / "token"
    token_file.write_text("the-admin-token-of-the-token-file\n")
    token_file.chmod(0o600)
    tokens["admin"] = "the-admin-token-of-the-token-file"
    server = Server(tmp, "--users", str(users_file), "--token-file", str(token_file),
                    "--trusted-proxy", "127.0.0.1", "--identity-header", "X-Forwarded-User").start()
    yield server, tokens, users_file
    server.stop()


ROLE_OF = {"vera": "viewer", "bo": "builder", "ada": "admin", "admin": "admin"}


@pytest.mark.parametrize("method,path,access", table_routes())
def test_every_route_and_method_asks_for_its_role(team, method, path, access):
    server, tokens, _ = team
    needed = NEEDED[access](method)
    status, body, headers = ask(server, method, path)
    if needed is None:
        assert status not in (401, 403), (method, path, status, body)
    else:
        assert status == 401, (method, path, status, body)
        assert headers.get("WWW-Authenticate") == "Bearer"
    for user in ("vera", "bo", "ada", "admin"):
        status, body, _ = ask(server, method, path, tokens[user])
        if needed and ROLES.index(ROLE_OF[user]) < ROLES.index(needed):
            assert status == 403, (method, path, user, status, body)
            if method != "HEAD":
                assert body["needed_role"] == needed
                assert f"needs the role {needed}; {user} is a {ROLE_OF[user]}" in body["error"]
        else:
            assert status not in (401, 403), (method, path, user, status, body)


def test_an_unknown_token_is_401_and_the_session_says_who_and_which_role(team):
    server, tokens, _ = team
    status, body, headers = ask(server, "GET", "/builds", "not-a-token")
    assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
    assert "--users" in body["error"] and "--token-file" in body["error"]
    status, body, headers = ask(server, "POST", "/ui/session", body={"token": tokens["vera"]})
    assert status == 200 and body == {"signed_in": True, "user": "vera", "role": "viewer"}
    cookie = headers["Set-Cookie"].split(";")[0]
    status, body, _ = ask(server, "GET", "/ui/session", headers={"Cookie": cookie})
    assert body["user"] == "vera" and body["role"] == "viewer" and body["signed_in"]
    # The session's requests are vera's: reading yes, submitting no.
    assert ask(server, "GET", "/builds", headers={"Cookie": cookie})[0] == 200
    status, body, _ = ask(server, "POST", "/builds", headers={"Cookie": cookie}, body={"simulate": "small-cnn"})
    assert status == 403 and body["needed_role"] == "builder"


def wait_status(server, token, build_id, wanted, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        _, doc, _ = ask(server, "GET", f"/builds/{build_id}", token)
        if doc["status"] in wanted:
            return doc
        time.sleep(0.05)
    raise AssertionError(doc)


def test_a_builder_cancels_only_their_own_and_an_admin_any(team):
    server, tokens, _ = team
    status, doc, _ = ask(server, "POST", "/builds", tokens["bo"], body={"simulate": "large-transformer"})
    assert status == 201, doc
    assert doc["submitted_by"] == "bo" and doc["cancelled_by"] is None
    build = doc["id"]
    status, body, _ = ask(server, "POST", f"/builds/{build}/cancel", tokens["bea"])
    assert status == 403, body
    assert "submitted by bo" in body["error"] and "admin" in body["error"]
    status, doc, _ = ask(server, "POST", f"/builds/{build}/cancel", tokens["ada"])
    assert status in (200, 202), doc
    doc = wait_status(server, tokens["vera"], build, {"cancelled"})
    assert doc["submitted_by"] == "bo" and doc["cancelled_by"] == "ada"
    # Their own: bo cancels bo's.
    _, doc, _ = ask(server, "POST", "/builds", tokens["bo"], body={"simulate": "large-transformer"})
    status, _, _ = ask(server, "POST", f"/builds/{doc['id']}/cancel", tokens["bo"])
    assert status in (200, 202)
    assert wait_status(server, tokens["vera"], doc["id"], {"cancelled"})["cancelled_by"] == "bo"
    # Lists carry them too.
    _, listed, _ = ask(server, "GET", "/builds", tokens["vera"])
    assert {b["submitted_by"] for b in listed["builds"]} == {"bo"}


def put_bytes(server, token, path, data):
    """An upload's (status, parsed body)."""
    status, body, _ = server.request("PUT", path, raw=data, headers={"Authorization": f"Bearer {token}"})
    return status, body


def test_a_builder_replaces_or_deletes_only_the_models_they_uploaded(team):
    """A model is its first stored upload's user's: another builder's PUT (of the model
    or a file of it) is refused on the request's head, before its body is read, and
    nothing of it is stored; an admin may do anything."""
    server, tokens, _ = team
    status, model = put_bytes(server, tokens["bo"], "/models/bos-net", b"bo's model")
    assert status == 201, model
    assert model["uploaded_by"] == "bo"
    first = model["files"]
    for path in ("/models/bos-net", "/models/bos-net/weights.bin"):
        status, body = put_bytes(server, tokens["bea"], path, b"bea's bytes")
        assert status == 403, (path, body)
        assert body["needed_role"] == "admin"
        assert "model bos-net was uploaded by bo; bea may replace or delete only their own" in body["error"]
    status, body, _ = ask(server, "DELETE", "/models/bos-net", tokens["bea"])
    assert status == 403 and "uploaded by bo" in body["error"], body
    _, model, _ = ask(server, "GET", "/models/bos-net", tokens["vera"])
    assert model["files"] == first and model["uploaded_by"] == "bo"  # nothing of bea's stored

    assert put_bytes(server, tokens["bo"], "/models/bos-net/weights.bin", b"w")[0] == 201  # their own
    status, model = put_bytes(server, tokens["bea"], "/models/beas-net", b"bea's model")
    assert status == 201 and model["uploaded_by"] == "bea"
    assert put_bytes(server, tokens["ada"], "/models/bos-net", b"ada's fix")[0] == 201
    assert ask(server, "GET", "/models/bos-net", tokens["vera"])[1]["uploaded_by"] == "bo"  # still bo's
    assert ask(server, "DELETE", "/models/bos-net", tokens["ada"])[0] == 204
    assert ask(server, "DELETE", "/models/beas-net", tokens["bea"])[0] == 204


def test_a_user_added_to_the_file_works_without_a_restart(team):
    server, tokens, users_file = team
    time.sleep(0.01)
    token = add_user(users_file, "newcomer", "builder")
    deadline = time.time() + 5
    while ask(server, "GET", "/builds", token)[0] == 401 and time.time() < deadline:
        time.sleep(0.1)
    assert ask(server, "GET", "/builds", token)[0] == 200
    r = run("user", "add", "newcomer", "--role", "viewer", "--users", str(users_file))
    assert r.returncode == 2 and "already in" in r.stderr and r.stdout == ""
    r = run("user", "add", "x", "--role", "owner", "--users", str(users_file))
    assert r.returncode == 2 and "viewer, builder or admin" in r.stderr
    listed = run("user", "ls", "--users", str(users_file))
    assert "newcomer builder" in listed.stdout and tokens["bo"] not in listed.stdout
    assert re.search(r"[0-9a-f]{64}", listed.stdout) is None  # never the digests


def test_a_trusted_proxy_names_the_user_and_an_unlisted_one_is_refused(team):
    server, tokens, _ = team
    status, doc, _ = ask(server, "POST", "/builds", headers={"X-Forwarded-User": "bo"},
                         body={"simulate": "small-cnn", "speed": 50})
    assert status == 201 and doc["submitted_by"] == "bo"
    status, body, _ = ask(server, "GET", "/builds", headers={"X-Forwarded-User": "mallory"})
    assert status == 403 and "trtwatch user add mallory" in body["error"]
    status, body, _ = ask(server, "GET", "/builds", headers={"X-Forwarded-User": "not a name"})
    assert status == 400 and "X-Forwarded-User" in body["error"]
    # The proxy without the header: the token decides.
    assert ask(server, "GET", "/builds", tokens["vera"])[0] == 200


def test_the_identity_header_from_an_untrusted_peer_is_ignored(tmp_path):
    users_file = tmp_path / "users"
    add_user(users_file, "ada", "admin")
    server = Server(tmp_path, "--users", str(users_file), "--trusted-proxy", "10.9.9.9",
                    "--identity-header", "X-Forwarded-User").start()
    try:
        status, _, headers = ask(server, "GET", "/builds", headers={"X-Forwarded-User": "ada"})
        assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
    finally:
        server.stop()


def test_bad_users_files_and_flags_refuse_the_start(tmp_path):
    bad = tmp_path / "users"
    bad.write_text("alice owner -\n")
    bad.chmod(0o600)
    r = run("serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"), "--users", str(bad), timeout=30)
    assert r.returncode == 2 and f"{bad}:1:" in r.stderr and "none of viewer, builder, admin" in r.stderr
    bad.write_text("admin viewer -\n")
    token = tmp_path / "token"
    token.write_text("sixteen-chars-or-more\n")
    token.chmod(0o600)
    r = run("serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"), "--users", str(bad),
            "--token-file", str(token), timeout=30)
    assert r.returncode == 2 and "--token-file" in r.stderr and "rename" in r.stderr
    r = run("serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"), "--users", str(bad),
            "--trusted-proxy", "127.0.0.1", timeout=30)
    assert r.returncode == 2 and "--identity-header" in r.stderr
    bad.chmod(0o666)
    r = run("user", "add", "x", "--role", "viewer", "--users", str(bad))
    assert r.returncode == 2 and "chmod go-w" in r.stderr


def mcp(server, token, message, session=None):
    """One JSON-RPC message to POST /mcp as the user of `token`: (status, answer, session id)."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    if session:
        headers["Mcp-Session-Id"] = session
    status, body, got = ask(server, "POST", "/mcp", token, headers, {"jsonrpc": "2.0", **message})
    return status, body, got.get("Mcp-Session-Id", session)


def mcp_session(server, token):
    status, body, session = mcp(server, token, {"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "roles", "version": "1"}}})
    assert status == 200 and session, body
    assert mcp(server, token, {"method": "notifications/initialized"}, session)[0] == 202
    return session


def call_tool(server, token, session, name, arguments):
    status, body, _ = mcp(server, token, {"id": 2, "method": "tools/call",
                                          "params": {"name": name, "arguments": arguments}}, session)
    assert status == 200, body
    return body["result"]


def test_mcp_builds_are_their_callers_and_sessions_are_their_users(team):
    """MCP over HTTP with the same tokens: a build an agent starts is its user's
    (submitted_by, the audit trail), a builder's cancel_build of another's build is
    refused, and a session is its user's alone (MCP's security best practices: another
    user's request naming it gets the 404 of an unknown session)."""
    server, tokens, _ = team
    bo = mcp_session(server, tokens["bo"])
    started = call_tool(server, tokens["bo"], bo, "build_engine",
                        {"simulate": "large-transformer", "seed": 3, "speed": 1, "wait": False})
    build = started["structuredContent"]["id"]
    assert started["structuredContent"]["submitted_by"] == "bo"

    bea = mcp_session(server, tokens["bea"])
    refused = call_tool(server, tokens["bea"], bea, "cancel_build", {"id": build})
    assert refused["isError"] and "was submitted by bo; bea may cancel only their own" in refused["content"][0]["text"]
    status, body, _ = mcp(server, tokens["bea"], {"id": 3, "method": "tools/list"}, bo)
    assert status == 404, body
    assert ask(server, "DELETE", "/mcp", tokens["bea"], {"Mcp-Session-Id": bo})[0] == 404
    assert mcp(server, tokens["bo"], {"id": 3, "method": "tools/list"}, bo)[0] == 200  # still bo's

    ada = mcp_session(server, tokens["ada"])
    assert not call_tool(server, tokens["ada"], ada, "cancel_build", {"id": build})["isError"]
    assert wait_status(server, tokens["vera"], build, {"cancelled"})["cancelled_by"] == "ada"
    status, trail, _ = ask(server, "GET", f"/audit?target={build}", tokens["ada"])
    assert status == 200, trail
    assert [(e["user"], e["action"]) for e in trail["entries"]] == [("ada", "build.cancel"), ("bo", "build.submit")]
