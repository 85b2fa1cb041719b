"""The service's build history end to end (docs/history.md, docs/api.md): four simulated
builds of one profile through the real service, then a fifth whose event stream carries
an `estimate` with a range and whose record keeps it; GET /history lists them, GET
/history/report and GET /builds/{id}/compare read them back; bad filters are 400; the
history outlives a restart; and the same on PostgreSQL with two replicas."""
import json
import os

import pytest

from conftest import run
from pg_server import pg  # noqa: F401  (the fixture)
from service_client import Server, SseReader

BUILD = {"simulate": "small-cnn", "speed": 8}


def run_build(server, seed):
    doc = server.submit({**BUILD, "seed": seed})
    events = SseReader(server.port, doc["events_url"]).read_all()
    record = server.wait_status(doc["id"], ["succeeded"], timeout=60)
    return record, events


def estimates(events):
    return [e["data"] for e in events if e["event"] == "estimate"]


def check_the_fifth_build_has_an_eta_and_the_history_reads_back(first, second):
    """Four builds on `first`, a fifth on `second` (the same server, or another replica)."""
    ids = []
    for seed in range(1, 5):
        record, events = run_build(first, seed)
        said = estimates(events)
        assert said and said[0]["based_on"] == {"builds": seed - 1, "match": "exact"}, said
        assert record["history_key"] and len(record["history_key"]) == 64
        assert record["estimate"]["based_on"]["builds"] == seed - 1
        ids.append(record["id"])
    fifth, events = run_build(second, 5)
    ranged = [e for e in estimates(events) if e["remaining"] is not None]
    assert ranged, "the fifth build's stream has an estimate with a range"
    for e in ranged:
        assert e["based_on"] == {"builds": 4, "match": "exact"}
        assert 0 <= e["remaining"]["p10"] <= e["remaining"]["p50"] <= e["remaining"]["p90"]
    kept = fifth["estimate"]
    assert kept["remaining"] == ranged[-1]["remaining"] and kept["based_on"] == ranged[-1]["based_on"]
    assert kept["t"] >= 0
    ids.append(fifth["id"])
    assert len({r for r in [first.get(i)["history_key"] for i in ids]}) == 1, "one build key"

    status, listed, _ = second.request("GET", "/history")
    assert status == 200, listed
    assert [b["build"] for b in listed["builds"]] == ids[::-1], "newest first, named by the service's ids"
    entry = listed["builds"][0]
    assert set(entry) == {"build", "key", "model", "backend", "finished_at", "elapsed", "status", "error", "families"}
    assert entry["model"] == "simulated:small-cnn" and entry["status"] == "succeeded" and entry["families"]
    assert entry["key"] == fifth["history_key"]
    for query, count in (("?model=small-cnn", 5), ("?model=no-such-model", 0), ("?limit=2", 2),
                         (f"?key={fifth['history_key']}", 5), ("?since=1h", 5), ("?key=" + "0" * 64, 0)):
        status, doc, _ = first.request("GET", "/history" + query)
        assert status == 200 and len(doc["builds"]) == count, (query, doc)

    status, report, _ = first.request("GET", "/history/report?model=small-cnn")
    assert status == 200, report
    [key] = report["keys"]
    assert key["key"] == fifth["history_key"] and key["builds"] == 5 and key["succeeded"] == 5
    assert {"model", "backend", "elapsed", "trend", "families", "regressions"} <= set(key)

    status, median, _ = first.request("GET", f"/builds/{fifth['id']}/compare")
    assert status == 200, median
    assert median["before"] == "the median of 4 builds" and median["after"] == fifth["id"]
    assert set(median) == {"before", "after", "before_elapsed", "after_elapsed", "families", "verdict"}
    status, pair, _ = first.request("GET", f"/builds/{fifth['id']}/compare?with={ids[0]}")
    assert status == 200 and pair["before"] == ids[0] and pair["after"] == fifth["id"], pair
    check_the_command_line_reads_the_services_history(second, ids, listed, report, median)
    return ids


def check_the_command_line_reads_the_services_history(server, ids, listed, report, median):
    """`trtwatch history|report|compare --service URL` print what the local commands print."""
    url = f"http://127.0.0.1:{server.port}"
    auth = []
    shown = run("history", "--service", url, *auth, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == listed["builds"][::-1], "oldest first, as the local history --json"
    text = run("history", "--service", url, *auth, "--model", "small-cnn")
    assert text.returncode == 0 and all(i in text.stdout for i in ids), text.stdout
    reported = run("report", "--service", url, *auth, "--json")
    assert reported.returncode == 0 and json.loads(reported.stdout) == report["keys"], reported.stderr
    text = run("report", "--service", url, *auth)
    assert text.returncode == 0 and "5 builds (5 succeeded)" in text.stdout, text.stdout
    compared = run("compare", ids[-1], "--service", url, *auth, "--json")
    assert compared.returncode == 0 and json.loads(compared.stdout) == median, compared.stderr
    text = run("compare", ids[0], ids[-1], "--service", url, *auth)
    assert text.returncode == 0 and "PHASE (own time)" in text.stdout, text.stdout
    unknown = run("compare", "b_" + "0" * 32, "--service", url, *auth)
    assert unknown.returncode == 2 and "no build" in unknown.stderr, unknown.stderr
    bad = run("history", "--service", "ftp://x", "--json")
    assert bad.returncode == 2 and "http://" in bad.stderr, bad.stderr


@pytest.mark.parametrize("query, names", [
    ("?limit=0", "limit"), ("?limit=1001", "limit"), ("?since=soon", "since"), ("?key=ABC", "key"),
    ("?model=", "model"), ("?colour=red", "colour"),
])
def test_bad_history_filters_are_400_naming_the_filter(tmp_path, query, names):
    s = Server(tmp_path).start()
    try:
        status, doc, _ = s.request("GET", "/history" + query)
        assert status == 400 and names in doc["error"], (query, doc)
        status, doc, _ = s.request("GET", "/history/report?limit=5")
        assert status == 400 and "model or since" in doc["error"], doc
        status, doc, _ = s.request("GET", "/builds?model=")
        assert status == 400 and "model" in doc["error"], doc
        status, doc, _ = s.request("POST", "/history")
        assert status == 405, doc
    finally:
        s.stop()


def test_the_fifth_build_has_an_eta_and_history_report_compare_read_it_back(tmp_path):
    s = Server(tmp_path).start()
    try:
        ids = check_the_fifth_build_has_an_eta_and_the_history_reads_back(s, s)
        # The build list filters by model (a simulated build's profile).
        status, doc, _ = s.request("GET", "/builds?model=small-cnn&status=succeeded")
        assert status == 200 and len(doc["builds"]) == 5, doc
        status, doc, _ = s.request("GET", "/builds?model=resnet")
        assert status == 200 and doc["builds"] == [], doc
        # Compare: an unknown build is 404, one not in the history yet is 409.
        status, doc, _ = s.request("GET", "/builds/b_" + "0" * 32 + "/compare")
        assert status == 404, doc
        status, doc, _ = s.request("GET", f"/builds/{ids[0]}/compare?with=b_" + "0" * 32)
        assert status == 404, doc
        status, doc, _ = s.request("GET", f"/builds/{ids[0]}/compare?with=nonsense")
        assert status == 400 and "with" in doc["error"], doc
        running = s.submit({"simulate": "large-transformer"})
        status, doc, _ = s.request("GET", f"/builds/{running['id']}/compare")
        assert status == 409 and "not in the history" in doc["error"], doc
        s.request("POST", f"/builds/{running['id']}/cancel", {"grace": 0})
        s.wait_status(running["id"], ["cancelled"], timeout=30)
        assert not (tmp_path / "data" / "history-work" / running["id"]).exists(), "the worker's folder is removed"
        assert not any((tmp_path / "data" / "history-work").iterdir())
    finally:
        s.stop()
    again = Server(tmp_path).start()  # the history outlives the service process (here without a token)
    try:
        status, doc, _ = again.request("GET", "/history")
        assert status == 200 and [b["build"] for b in doc["builds"]] == ids[::-1], doc
    finally:
        again.stop()


def test_the_command_line_sends_the_services_token(tmp_path):
    token = tmp_path / "token"
    token.write_text("0123456789abcdef0123456789abcdef\n")
    os.chmod(token, 0o600)
    s = Server(tmp_path, "--token-file", str(token)).start()
    try:
        url = f"http://127.0.0.1:{s.port}"
        shown = run("history", "--service", url, "--token-file", str(token), "--json")
        assert shown.returncode == 0 and json.loads(shown.stdout) == [], shown.stderr
        refused = run("history", "--service", url, "--json")
        assert refused.returncode == 2 and "the service answered" in refused.stderr, refused.stderr
    finally:
        s.stop()


def test_two_replicas_on_postgresql_share_the_history(tmp_path, pg):
    uri = pg.create_database("history")
    a = Server(tmp_path, "--store", uri, "--replica", "a", data_dir=tmp_path / "a", name="a").start()
    b = Server(tmp_path, "--store", uri, "--replica", "b", data_dir=tmp_path / "b", name="b").start()
    try:
        check_the_fifth_build_has_an_eta_and_the_history_reads_back(a, b)
    finally:
        a.stop()
        b.stop()
