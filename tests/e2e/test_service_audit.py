"""Issue 38 item 3, the audit trail: a real `trtwatch serve` records who did what to
which build or model, when — a submit, a cancel, a model's upload and removal — and
GET /audit reads it back newest first, in pages, filtered by user, action or target,
refusing bad parameters with 400 and the values they take. Without credentials the
user is "anonymous" (docs/api.md, "Audit trail")."""
import hashlib
import http.client
import json

import pytest

from service_client import Server


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path).start()
    yield s
    s.stop()


def put(server, path, data):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("PUT", path, body=data)
    res = conn.getresponse()
    body = res.read()
    conn.close()
    return res.status, json.loads(body) if body else None


def audit(server, query=""):
    status, doc, _ = server.request("GET", "/audit" + query)
    assert status == 200, (status, doc)
    return doc


def test_actions_appear_in_the_audit_trail_in_order_with_paging_and_filters(server):
    doc = server.submit({"simulate": "large-transformer"})
    status, cancelled, _ = server.request("POST", f"/builds/{doc['id']}/cancel")
    assert status == 202, cancelled
    assert put(server, "/models/net", b"onnx bytes")[0] == 201
    assert server.request("DELETE", "/models/net")[0] == 204
    assert server.request("DELETE", "/models/net")[0] == 404  # nothing removed: not recorded

    trail = audit(server)
    assert trail["next_before"] is None
    entries = trail["entries"]
    assert [(e["action"], e["target"]) for e in entries] == [
        ("model.delete", "net"), ("model.upload", "net"), ("build.cancel", doc["id"]), ("build.submit", doc["id"])]
    assert {e["user"] for e in entries} == {"anonymous"}
    seqs = [e["seq"] for e in entries]
    assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == 4
    assert all(e["at"].endswith("Z") and e["at"][4] == "-" for e in entries), entries
    upload = entries[1]["detail"]
    assert upload == {"file": "model.onnx", "size": 10, "sha256": hashlib.sha256(b"onnx bytes").hexdigest()}, upload
    assert entries[2]["detail"]["reason"] == "api"
    assert entries[3]["detail"] == {"model": None}

    first = audit(server, "?limit=3")
    assert [e["seq"] for e in first["entries"]] == seqs[:3] and first["next_before"] == seqs[2]
    rest = audit(server, f"?limit=3&before={first['next_before']}")
    assert [e["seq"] for e in rest["entries"]] == seqs[3:] and rest["next_before"] is None

    assert [e["target"] for e in audit(server, "?action=model.upload")["entries"]] == ["net"]
    assert [e["action"] for e in audit(server, f"?target={doc['id'][:6]}")["entries"]] == ["build.cancel", "build.submit"]
    assert len(audit(server, "?user=anonymous")["entries"]) == 4
    assert audit(server, "?user=nobody") == {"entries": [], "next_before": None}


@pytest.mark.parametrize("query, error", [
    ("?limit=0", "limit must be an integer from 1 to 1000"),
    ("?limit=5000", "limit must be an integer from 1 to 1000"),
    ("?before=x", "before must be a positive integer"),
    ("?action=build.explode", "action must be one of build.submit, build.cancel, group.submit"),
    ("?since=1h", 'unknown query parameter "since"; use limit, before, user, action or target'),
])
def test_bad_parameters_get_400_naming_the_parameter(server, query, error):
    status, doc, _ = server.request("GET", "/audit" + query)
    assert status == 400 and error in doc["error"], (status, doc)


def test_audit_retention_flag_is_checked_and_reaches_metrics(tmp_path):
    s = Server(tmp_path, "--audit-retain-for", "0").start()  # 0: kept forever
    try:
        _, metrics, _ = s.request("GET", "/metrics")
        assert "trtwatch_audit_write_failures_total 0" in metrics
    finally:
        s.stop()
    from conftest import run
    r = run("serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "x"), "--audit-retain-for", "soon",
            timeout=60)
    assert r.returncode == 2 and "--audit-retain-for" in r.stderr, r.stderr


def test_the_trail_names_each_user_and_only_admins_read_it(tmp_path):
    """With --users, each entry names the user who acted (a builder's submit and upload, a
    dashboard sign-in) and GET /audit needs the role admin (403 naming it)."""
    users = tmp_path / "users"
    bo, ada = "b0" * 32, "ad" * 32
    users.write_text(f"bo builder {hashlib.sha256(bo.encode()).hexdigest()}\n"
                     f"ada admin {hashlib.sha256(ada.encode()).hexdigest()}\n")
    users.chmod(0o600)
    s = Server(tmp_path, "--users", str(users)).start()
    try:
        as_bo = {"Authorization": f"Bearer {bo}"}
        status, doc, _ = s.request("POST", "/builds", {"simulate": "small-cnn", "speed": 50}, headers=as_bo)
        assert status == 201, doc
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        conn.request("PUT", "/models/net", body=b"onnx", headers=as_bo)
        assert conn.getresponse().status == 201
        conn.close()
        assert s.request("POST", "/ui/session", {"token": ada})[0] == 200

        status, refused, _ = s.request("GET", "/audit", headers=as_bo)
        assert status == 403 and refused["needed_role"] == "admin", refused
        status, trail, _ = s.request("GET", "/audit", headers={"Authorization": f"Bearer {ada}"})
        assert status == 200, trail
        assert [(e["user"], e["action"]) for e in trail["entries"]] == [
            ("ada", "ui.sign_in"), ("bo", "model.upload"), ("bo", "build.submit")]
    finally:
        s.stop()
