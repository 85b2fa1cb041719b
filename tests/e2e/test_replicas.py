"""Replicas: several `trtwatch serve` processes on one PostgreSQL database (pg_server.py)
act as one service. The drills of issue 23: a build followed and cancelled through
replicas that do not run it, a queue drained by three replicas with every build run
exactly once, and the build of a replica killed with SIGKILL concluded by another.
Loopback only; every wait is bounded."""
import json
import os
import signal
import time

from pg_server import pg  # noqa: F401  (the fixture)
from service_client import SseReader, read_until, replica, start_all
from waiting import wait_for


def stop_all(servers):
    for s in servers:
        s.stop()


def test_a_build_followed_on_two_replicas_and_cancelled_through_a_third_has_one_record(tmp_path, pg):
    uri = pg.create_database("drill_cancel")
    a, b, c = start_all([replica(tmp_path, uri, n) for n in ("a", "b", "c")])
    try:
        changes = SseReader(b.port, "/builds/changes")  # b hears a's record writes
        doc = a.submit({"simulate": "large-transformer", "seed": 7})  # minutes long: it runs on a
        followers = [SseReader(s.port, doc["events_url"]) for s in (b, c)]
        for f in followers:
            assert f.status == 200
            read_until(f, lambda e: e["event"] == "step")
        assert pg.psql("drill_cancel", f"SELECT owner FROM builds WHERE id = '{doc['id']}'") == "a"

        status, cancelling, _ = c.request("POST", f"/builds/{doc['id']}/cancel", {"grace": 5})
        assert status == 202 and cancelling["status"] == "cancelling", (status, cancelling)
        assert cancelling["cancel"]["reason"] == "api"
        streams = [f.read_all() for f in followers]  # each ends after build_finish
        for rest in streams:
            assert rest[-1]["event"] == "build_finish" and rest[-1]["data"]["status"] == "cancelled"
            assert "cancel_requested" in [e["event"] for e in rest]
            seqs = [e["id"] for e in rest]
            assert seqs == sorted(set(seqs)), "in seq order, no duplicate"
        assert streams[0][-1] == streams[1][-1]

        records = [s.wait_status(doc["id"], ["cancelled"], timeout=30) for s in (a, b, c)]
        assert records[0] == records[1] == records[2]
        assert records[0]["error"].startswith(f"cancelled by POST /builds/{doc['id']}/cancel"), records[0]
        # What each follower got is the stored log: no structural event missing (a slow
        # reader may have had step events coalesced, as on one replica).
        stored = [e["data"] for e in SseReader(b.port, doc["events_url"]).read_all()]
        assert stored[-1]["seq"] == records[0]["events"]
        for rest in streams:
            tail = [e for e in stored if e["seq"] >= rest[0]["id"]]
            assert [e["data"] for e in rest if e["event"] != "step"] == [e for e in tail if e["type"] != "step"]
        heard = read_until(changes, lambda e: e["data"]["id"] == doc["id"] and e["data"]["status"] == "cancelled")
        statuses = [e["data"]["status"] for e in heard if e["data"]["id"] == doc["id"]]
        assert statuses[0] in ("queued", "running") and statuses[-1] == "cancelled", statuses
        # Each replica's /metrics labels its samples, so that a scraper tells them apart.
        for s, name in ((a, "a"), (b, "b"), (c, "c")):
            status, text, _ = s.request("GET", "/metrics")
            assert status == 200
            samples = [line for line in text.splitlines() if line and not line.startswith("#")]
            assert samples and all(f'replica="{name}"' in line for line in samples), samples[:3]
    finally:
        stop_all([a, b, c])


# Under a sanitizer each worker process costs ten times the CPU to start (0.3-0.6 s on
# two cores): fewer builds keep the drill within its bound, racing the same claims.
QUEUED_BUILDS = 60 if os.environ.get("TRTWATCH_SANITIZE") else 200


def test_queued_builds_run_exactly_once_across_three_replicas(tmp_path, pg):
    uri = pg.create_database("drill_queue")
    servers = start_all([replica(tmp_path, uri, n, "--max-concurrent", "2", "--queue-limit", "500")
                         for n in ("a", "b", "c")])
    try:
        ids = [servers[i % 3].submit({"simulate": "failing", "speed": 1000, "seed": i})["id"]
               for i in range(QUEUED_BUILDS)]
        assert len(set(ids)) == QUEUED_BUILDS

        def finished():
            n = pg.psql("drill_queue", "SELECT count(*) FROM builds WHERE status IN ('failed', 'succeeded')")
            return int(n) == QUEUED_BUILDS

        wait_for(finished, 50, f"{QUEUED_BUILDS} builds finished")
        starts = pg.psql("drill_queue", "SELECT build_id, count(*) FROM events WHERE json LIKE "
                         "'%\"type\":\"build_start\"%' GROUP BY build_id HAVING count(*) = 1")
        finishes = pg.psql("drill_queue", "SELECT build_id, count(*) FROM events WHERE json LIKE "
                           "'%\"type\":\"build_finish\"%' GROUP BY build_id HAVING count(*) = 1")
        assert sorted(line.split("|")[0] for line in starts.splitlines()) == sorted(ids), "one build_start each"
        assert sorted(line.split("|")[0] for line in finishes.splitlines()) == sorted(ids), "one build_finish each"
        owners = dict(line.split("|") for line in pg.psql(
            "drill_queue", "SELECT owner, count(*) FROM builds GROUP BY owner").splitlines())
        assert set(owners) == {"a", "b", "c"}, owners  # every replica took its share
        assert sum(int(n) for n in owners.values()) == QUEUED_BUILDS
        for s in servers:
            status, health, _ = s.request("GET", "/healthz")
            assert status == 200 and health["queued"] == 0, health
    finally:
        stop_all(servers)


def test_the_build_of_a_replica_killed_with_sigkill_is_concluded_by_another(tmp_path, pg):
    uri = pg.create_database("drill_kill")
    doomed, survivor = start_all([replica(tmp_path, uri, n, "--lease-seconds", "3") for n in ("doomed", "survivor")])
    workers = []
    try:
        doc = doomed.submit({"simulate": "large-transformer", "seed": 3})
        doomed.wait_status(doc["id"], ["running"])
        follower = SseReader(survivor.port, doc["events_url"])
        read_until(follower, lambda e: e["event"] == "step")
        workers = doomed.worker_pids()
        killed_at = time.time()
        doomed.proc.send_signal(signal.SIGKILL)
        doomed.proc.wait(10)

        record = survivor.wait_status(doc["id"], ["interrupted"], timeout=20)
        assert time.time() - killed_at < 3 + 5, "concluded within the lease and a few seconds"
        assert 'replica "doomed" stopped renewing its lease' in record["error"], record["error"]
        rest = follower.read_all()  # the follower on the survivor sees the end too
        assert rest[-1]["event"] == "build_finish" and rest[-1]["data"]["status"] == "failed"
        assert rest[-1]["data"]["error"] == record["error"]
        assert pg.psql("drill_kill", f"SELECT owner FROM builds WHERE id = '{doc['id']}'") == "survivor"
    finally:
        for pid in workers:  # the dead replica's worker, in its own process group
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        stop_all([doomed, survivor])


def test_a_replica_that_cannot_reach_the_database_says_so_until_it_can(tmp_path, pg):
    uri = pg.create_database("drill_unreachable")
    s = replica(tmp_path, uri, "lonely").start()
    try:
        assert s.request("GET", "/healthz")[0] == 200
        pg.stop()
        try:
            def unhealthy():
                status, body, headers = s.request("GET", "/healthz")
                return status == 503 and body["status"] == "unhealthy" and body
            body = wait_for(unhealthy, 20, "/healthz unhealthy while PostgreSQL is down")
            assert "could not" in body["store"], body
            assert s.request("POST", "/builds", {"simulate": "small-cnn"})[0] == 503
        finally:
            pg.start()
        wait_for(lambda: s.request("GET", "/healthz")[0] == 200, 20, "/healthz healthy again")
        doc = s.submit({"simulate": "small-cnn", "speed": 8})
        assert s.wait_status(doc["id"], ["succeeded"], timeout=30)["status"] == "succeeded"
    finally:
        s.stop()


def test_postgresql_stopped_and_started_mid_build_keeps_the_build_and_its_whole_log(tmp_path, pg):
    uri = pg.create_database("drill_restart")
    s = replica(tmp_path, uri, "steady").start()
    try:
        doc = s.submit({"simulate": "large-transformer", "seed": 5})  # minutes long
        reader = SseReader(s.port, doc["events_url"])
        read_until(reader, lambda e: e["event"] == "step")
        pg.stop()
        try:
            wait_for(lambda: s.request("GET", "/healthz")[0] == 503, 20, "/healthz unhealthy while PostgreSQL is down")
            _, health, _ = s.request("GET", "/healthz")
            assert "database" in health["store"] and "--data-dir" not in health["store"], health
        finally:
            pg.start()
        wait_for(lambda: s.request("GET", "/healthz")[0] == 200, 40, "/healthz healthy again")
        # Its events were kept while the database was down (issue 36) and written in order
        # when it came back: the build runs on, its log without a gap.
        assert s.get(doc["id"])["status"] == "running"
        later = [reader.next_event() for _ in range(20)]  # its follower goes on: it gets what was stored
        stored = dict(line.split("|", 1) for line in pg.psql(
            "drill_restart", f"SELECT seq, json FROM events WHERE build_id = '{doc['id']}'").splitlines())
        for e in later:
            assert json.loads(stored[str(e["id"])]) == e["data"], e
        after = s.submit({"simulate": "small-cnn", "speed": 8})
        assert s.wait_status(after["id"], ["succeeded"], timeout=30)["status"] == "succeeded"
    finally:
        s.stop()
