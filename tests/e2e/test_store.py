"""`trtwatch serve --store postgresql://…` end to end against a throwaway PostgreSQL
server (pg_server.py): builds, their events and records live in the database across
restarts; one service per database; a newer schema and bad URIs are refused at start."""
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
    assert pg.psql("restart", "SELECT version FROM trtwatch_schema") == "1"
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


def test_a_second_service_on_the_same_database_is_refused(tmp_path, pg):
    uri = pg.create_database("one_service")
    s = Server(tmp_path, "--store", uri).start()
    try:
        code, err = serve_refused(tmp_path, "--store", uri)
        assert code == 2, err
        assert f'the database "one_service" on 127.0.0.1:{pg.port} is in use by another trtwatch service' in err
        assert "give this one another database in --store" in err
        # TRTWATCH_STORE names it as well, and `trtwatch mcp` is refused alike.
        code, err = serve_refused(tmp_path, env={"TRTWATCH_STORE": uri})
        assert code == 2 and "is in use by another trtwatch service" in err, err
        r = run("mcp", "--data-dir", str(tmp_path / "mcp"), "--store", uri, input="", timeout=60)
        assert r.returncode == 2 and "is in use by another trtwatch service" in r.stderr, r.stderr
        assert s.request("GET", "/healthz")[0] == 200  # the first one serves on
    finally:
        s.stop()
    Server(tmp_path, "--store", uri, name="after").start().stop()  # free once the first has gone


def test_a_database_of_a_newer_schema_is_refused(tmp_path, pg):
    uri = pg.create_database("newer")
    Server(tmp_path, "--store", uri).start().stop()
    pg.psql("newer", "UPDATE trtwatch_schema SET version = 99")
    code, err = serve_refused(tmp_path, "--store", uri)
    assert code == 2
    assert ("was written by a newer trtwatch (schema 99, this binary knows up to 1): upgrade trtwatch or point "
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
