"""`trtwatch serve --store postgresql://…` end to end against a throwaway PostgreSQL
server (pg_server.py): builds, their events and records live in the database across
restarts; replicas share a database; a newer schema and bad URIs are refused at start."""
import os

from conftest import run
from pg_server import pg  # noqa: F401  (the fixture)
from service_client import Server, SseReader


def serve_refused(tmp_path, *args, env=None):
    """A `serve` that must not start: its exit code and stderr."""
    r = run("serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "refused"), *args, timeout=60, env=env)
    return r.returncode, r.stderr


def test_builds_events_and_records_survive_a_restart_in_postgresql(tmp_path, pg):
    uri = pg.create_database("restart")
    s = Server(tmp_path, "--store", uri).start()
    try:
        doc = s.submit({"simulate": "small-cnn", "speed": 4, "seed": 3})
        events = SseReader(s.port, doc["events_url"]).read_all()
        assert events[0]["event"] == "build_start" and events[-1]["event"] == "build_finish"
        record = s.wait_status(doc["id"], ["succeeded"])
        assert record["events"] == events[-1]["id"]
    finally:
        assert s.stop() == 0
    stored = pg.psql("restart", f"SELECT count(*), max(seq) FROM events WHERE build_id = '{doc['id']}'")
    assert stored == f"{len(events)}|{events[-1]['id']}"
    assert pg.psql("restart", "SELECT version FROM trtwatch_schema") == "5"
    # The audit trail is the database's too (docs/api.md, "Audit trail").
    assert pg.psql("restart", "SELECT user_name, action, target FROM audit") == f"anonymous|build.submit|{doc['id']}"
    data = tmp_path / "data"
    assert not (data / "trtwatch.db").exists() and not (data / "trtwatch.lock").exists(), os.listdir(data)

    again = Server(tmp_path, "--store", uri, name="again").start()
    try:
        assert again.get(doc["id"]) == record
        replay = SseReader(again.port, doc["events_url"]).read_all()
        assert [e["data"] for e in replay] == [e["data"] for e in events]
        status, listing, _ = again.request("GET", "/builds")
        assert status == 200 and [b["id"] for b in listing["builds"]] == [doc["id"]]
    finally:
        again.stop()


def test_a_second_service_on_the_same_database_is_a_replica(tmp_path, pg):
    uri = pg.create_database("replicas")
    s = Server(tmp_path, "--store", uri, "--replica", "first").start()
    other = Server(tmp_path, "--store", uri, data_dir=tmp_path / "other", name="other")
    try:
        code, err = serve_refused(tmp_path, "--store", uri, "--replica", "no spaces")
        assert code == 2 and "is no replica name" in err and "1 to 64 letters" in err, err
        code, err = serve_refused(tmp_path, "--store", uri, env={"TRTWATCH_REPLICA": "a/b"})
        assert code == 2 and '--replica "a/b" is no replica name' in err, err
        code, err = serve_refused(tmp_path, "--store", uri, "--lease-seconds", "1")
        assert code == 2 and "--lease-seconds must be from 3 to 300" in err, err
        other.start()
        doc = other.submit({"simulate": "small-cnn", "speed": 4, "seed": 1})
        assert s.wait_status(doc["id"], ["succeeded"])["id"] == doc["id"]  # the first sees it
        assert s.request("GET", "/healthz")[0] == 200 and other.request("GET", "/healthz")[0] == 200
    finally:
        other.stop()
        s.stop()


def test_a_database_of_a_newer_schema_is_refused(tmp_path, pg):
    uri = pg.create_database("newer")
    Server(tmp_path, "--store", uri).start().stop()
    pg.psql("newer", "UPDATE trtwatch_schema SET version = 99")
    code, err = serve_refused(tmp_path, "--store", uri)
    assert code == 2
    assert ("was written by a newer trtwatch (schema 99, this binary knows up to 5): upgrade trtwatch or point "
            "--store elsewhere") in err


def test_bad_store_uris_exit_2_with_the_fix(tmp_path, pg):
    code, err = serve_refused(tmp_path, "--store", "postgresql://u@h:notaport/db")
    assert code == 2 and "not a PostgreSQL connection URI" in err and "postgresql://USER@HOST:PORT/DB" in err, err
    code, err = serve_refused(tmp_path, "--store", "mysql://root:hunter2@h/db")
    assert code == 2 and "is no store this trtwatch knows" in err and "hunter2" not in err, err
    pg.stop()
    try:
        code, err = serve_refused(tmp_path, "--store", f"postgresql://postgres:s3cret@127.0.0.1:{pg.port}/x")
    finally:
        pg.start()
    assert code == 2 and "cannot connect to the database" in err and "start PostgreSQL there" in err, err
    assert "s3cret" not in err
