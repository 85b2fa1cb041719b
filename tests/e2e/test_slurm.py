"""The Slurm executor against a real Slurm 22.05 cluster the tests start (slurm_cluster.py:
munge, slurmctld, three slurmd with typed fake GPUs). Each drill runs simulated builds as
batch jobs through `trtwatch serve --executor slurm`: a build followed live to its end,
cancel (cooperative), `scancel` from outside, a node's slurmd killed mid-build, slurmctld
restarted mid-build, the service restarted mid-build (the job runs on, the next service follows it to its end),
and, in the release suite, Slurm's time limit.
Every wait is bounded."""
import json
import os
import signal

from service_client import Server, SseReader, read_until
from waiting import wait_for
import pytest

from slurm_cluster import NODES, slurm  # noqa: F401  (the fixture)

LONG = {"simulate": "large-transformer", "seed": 3}  # minutes long: ended by the drill


@pytest.fixture(autouse=True)
def _slurm_conf(slurm, monkeypatch):
    """The service's sbatch, scontrol and scancel reach the test cluster; each test ends
    with no job left (jobs outlive the service by design, so a failed test's would keep
    the next test's waiting for GPUs)."""
    monkeypatch.setenv("SLURM_CONF", slurm.conf)
    yield
    slurm.run("scancel", "--user=root", check=False)
    wait_for(lambda: not slurm.run("squeue", "-h").stdout.strip(), 30, "no job left on the cluster")
    # A node a drill killed and started again may register late on a loaded machine:
    # the next test starts with every node (and its GPUs) back in service.
    slurm.wait_idle(list(NODES), timeout=60)


def slurm_server(tmp_path, cluster, *extra, name="server"):
    return Server(tmp_path, "--executor", "slurm", "--slurm-partition", "gpu", "--slurm-arg=--gres=gpu:1",
                  "--cancel-grace", "5s", *extra, data_dir=tmp_path / "data", name=name)


def running_on_a_node(server, build_id):
    """The record once its job runs on a node and the job's GPU is known."""
    return wait_for(lambda: (lambda d: d if d["job"] and d["job"]["state"] == "RUNNING" and d["job"]["gpu"]
                             ["cuda_visible_devices"] else None)(server.get(build_id)), 20,
                    f"job of {build_id} running with its GPU")


def test_a_simulated_build_runs_as_a_job_with_live_events_and_its_place_recorded(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm).start()
    try:
        doc = server.submit({"simulate": "small-cnn", "seed": 1, "speed": 2})
        assert doc["job"]["executor"] == "slurm"
        events = SseReader(server.port, doc["events_url"])
        first = read_until(events, lambda e: e["event"] == "step")
        # Live: a step reaches the follower while the build is still running.
        assert server.get(doc["id"])["status"] == "running", first[-1]
        rest = events.read_all()
        assert rest[-1]["event"] == "build_finish"
        final = server.wait_status(doc["id"], {"succeeded", "failed", "cancelled", "timed_out"}, timeout=30)
        assert final["status"] == "succeeded", final
        job = final["job"]
        assert job["id"].isdigit() and job["state"] == "COMPLETED", job
        assert job["node"] in ("n1", "n2", "n3")
        assert job["gpu"]["cuda_visible_devices"] == "0" and job["gpu"]["slurm_job_gpus"] in ("0", "1"), job
        fields = slurm.job(job["id"])
        assert fields["JobName"] == "trtwatch-" + doc["id"]
        assert fields["NodeList"] == job["node"]
    finally:
        server.stop()


def test_cancel_stops_the_job_cooperatively(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm).start()
    try:
        doc = server.submit(LONG)
        events = SseReader(server.port, doc["events_url"])
        read_until(events, lambda e: e["event"] == "step")
        status, cancelling, _ = server.request("POST", f"/builds/{doc['id']}/cancel")
        assert status == 202, (status, cancelling)
        final = server.wait_status(doc["id"], {"cancelled", "failed", "succeeded"}, timeout=30)
        assert final["status"] == "cancelled", final
        assert final["cancel"]["stop"] == "cooperative", final["cancel"]
        assert final["reason"] is None, final  # asked by trtwatch: not Slurm's doing
        assert read_until(events, lambda e: e["event"] == "build_finish")[-1]["event"] == "build_finish"
    finally:
        server.stop()


def test_scancel_from_outside_is_recorded_as_slurms_cancel(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm).start()
    try:
        doc = server.submit(LONG)
        events = SseReader(server.port, doc["events_url"])
        job = running_on_a_node(server, doc["id"])["job"]
        read_until(events, lambda e: e["event"] == "step")
        slurm.run("scancel", job["id"])
        live = read_until(events, lambda e: e["event"] == "build_finish")
        final = server.wait_status(doc["id"], {"cancelled", "failed", "succeeded", "interrupted"}, timeout=30)
        assert final["status"] == "cancelled" and final["reason"] == "slurm_cancelled", final
        assert final["job"]["state"] == "CANCELLED"
        assert "outside trtwatch" in final["error"]
        # The record's cancel says who stopped it: Slurm, from outside (docs/api.md's reasons), not
        # the service's stop ("signal") nor a client's ("api").
        cancel = final["cancel"]
        assert cancel is not None and cancel["reason"] == "slurm_cancelled", cancel
        assert cancel["message"] == final["error"] and cancel["requested_at"], cancel
        assert cancel["stop"] in ("cooperative", "forced"), cancel
        # The live stream and the stored log say the same: the worker's cancel_requested for
        # Slurm's SIGTERM names Slurm's cancel, and one build_finish, last, says cancelled.
        stored = SseReader(server.port, doc["events_url"]).read_all()
        for log in (live, stored):
            asked = [e["data"] for e in log if e["event"] == "cancel_requested"]
            assert len(asked) <= 1 and all(a["reason"] == "slurm_cancelled" for a in asked), asked
            finishes = [e for e in log if e["event"] == "build_finish"]
            assert len(finishes) == 1 and finishes[0] is log[-1], [e["event"] for e in log[-3:]]
            assert (finishes[0]["data"]["status"], finishes[0]["data"]["error"]) == ("cancelled", final["error"])
        # What followers saw after Slurm's cancel is what was stored (steps may be coalesced live).
        assert [(e["id"], e["data"]) for e in stored if e["id"] > live[0]["id"] and e["event"] != "step"] == \
            [(e["id"], e["data"]) for e in live[1:] if e["event"] != "step"]
        if cancel["stop"] == "cooperative":  # the worker handled the SIGTERM: its cancel is in the log
            assert len([e for e in stored if e["event"] == "cancel_requested"]) == 1
    finally:
        server.stop()


def _kill_job_processes(job_id):
    """The processes of a job (its slurmstepd and the build under it), as a dead node loses
    them: those whose environment says SLURM_JOB_ID=job_id, and the job's slurmstepd."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if f"SLURM_JOB_ID={job_id}".encode() in environ or f"[{job_id}.batch]".encode() in cmdline:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_node_that_dies_mid_build_ends_it_as_node_fail(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm).start()
    try:
        doc = server.submit(LONG)
        job = running_on_a_node(server, doc["id"])["job"]
        slurm.kill_node(job["node"])
        _kill_job_processes(job["id"])
        final = server.wait_status(doc["id"], {"failed", "cancelled", "succeeded", "interrupted"}, timeout=40)
        assert final["status"] == "failed" and final["reason"] == "slurm_node_fail", (final["error"], final["job"])
        assert final["job"]["state"] == "NODE_FAIL" and "NODE_FAIL" in final["error"]
        # Its worker was killed (SIGKILL), never an exit with code 0: Slurm reports 0:0 for a
        # lost node's job, and the record keeps the kill (sacct(1), ExitCode "code:signal").
        assert (final["exit_code"], final["exit_signal"]) == (None, 9), (final["exit_code"], final["exit_signal"])
    finally:
        server.stop()
        if node_missing := [n for n in ("n1", "n2", "n3") if n not in slurm.slurmd_pids]:
            for n in node_missing:
                slurm.start_node(n)
            slurm.run("scontrol", "update", f"NodeName={','.join(node_missing)}", "State=RESUME", check=False)


def test_a_service_restarted_mid_build_follows_the_job_to_its_end(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm)
    server.start()
    doc = server.submit({"simulate": "small-cnn", "seed": 2, "speed": 0.5})
    try:
        job = running_on_a_node(server, doc["id"])["job"]
        assert server.stop() == 0  # a graceful stop leaves cluster jobs running
        assert slurm.job(job["id"])["JobState"] in ("RUNNING", "COMPLETED")
        server.start()
        events = SseReader(server.port, doc["events_url"])
        stream = events.read_all()
        final = server.wait_status(doc["id"], {"succeeded", "failed", "cancelled", "interrupted"}, timeout=40)
        assert final["status"] == "succeeded", (final["error"], final["reason"], final["job"], server.log()[-2000:])
        assert final["job"]["id"] == job["id"] and final["job"]["state"] == "COMPLETED"
        assert stream[-1]["event"] == "build_finish"
        # The stored log (replayed whole now the build is over) has every event the job
        # wrote, once: none lost nor repeated across the restart.
        log = SseReader(server.port, doc["events_url"]).read_all()
        with open(final["job"]["stream"]) as f:
            written = [json.loads(line)["seq"] for line in f if line.strip()]
        logged = [e["id"] for e in log]
        assert logged == written, sorted(set(written) - set(logged))
    finally:
        server.stop()


def test_a_build_goes_on_while_slurmctld_restarts_and_is_followed_to_its_end(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm).start()
    try:
        doc = server.submit({"simulate": "small-cnn", "seed": 4, "speed": 0.7})
        job = running_on_a_node(server, doc["id"])["job"]
        slurm.restart_controller()
        final = server.wait_status(doc["id"], {"succeeded", "failed", "cancelled", "interrupted"}, timeout=40)
        assert final["status"] == "succeeded", (final["error"], final["reason"], final["job"])
        assert final["job"]["id"] == job["id"] and final["job"]["state"] == "COMPLETED"
    finally:
        server.stop()


def test_a_build_waiting_for_a_gpu_shows_slurms_pending_reason_and_cancels_off_the_queue(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm, "--max-concurrent", "7").start()
    try:
        docs = [server.submit(LONG) for _ in range(7)]  # six GPUs in the cluster: one waits
        # Slurm says RUNNING a moment before the job's shell writes where it runs: wait for both.
        waiting = wait_for(lambda: [d for d in (server.get(x["id"]) for x in docs)
                                    if d["job"] and d["job"]["state"] == "PENDING" and d["job"]["pending_reason"]
                                    and all((lambda j: j["state"] == "RUNNING" and j["gpu"]["slurm_job_gpus"])(
                                        server.get(x["id"])["job"]) for x in docs if x["id"] != d["id"])], 30,
                           "six jobs running with their GPUs known and one pending")
        pending = waiting[0]
        assert pending["job"]["pending_reason"] in ("Resources", "Priority"), pending["job"]
        assert pending["job"]["node"] is None
        running = [server.get(x["id"])["job"] for x in docs if x["id"] != pending["id"]]
        gpus = {(j["node"], j["gpu"]["slurm_job_gpus"]) for j in running}
        assert len(gpus) == 6, running  # never two builds on one GPU
        for d in docs:
            server.request("POST", f"/builds/{d['id']}/cancel")
        final = server.wait_status(pending["id"], {"cancelled", "failed"}, timeout=20)
        assert final["status"] == "cancelled" and final["reason"] is None, (final["error"], final["job"])
        for d in docs:
            server.wait_status(d["id"], {"cancelled"}, timeout=20)
    finally:
        server.stop()


GPU_TYPES = ("--gpu-type", "h200=gres:h200,cc=9.0", "--gpu-type", "a100=gres:a100,cc=8.0",
             "--gpu-type", "l4=gres:l4,cc=8.9", "--gpu-type", "b200=gres:b200,cc=10.0")


def test_a_build_asking_for_a_gpu_runs_on_a_node_that_has_it_and_an_unknown_one_is_refused(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm, "--max-concurrent", "4", *GPU_TYPES).start()
    try:
        quick = {"simulate": "small-cnn", "speed": 4}
        asks = {"h200": {"type": "h200"}, "a100": {"compute_capability": "8.0"}, "l4": {"type": "L4"}}
        docs = {gpu: server.submit(dict(quick, gpu=need)) for gpu, need in asks.items()}
        for gpu, doc in docs.items():
            final = server.wait_status(doc["id"], {"succeeded", "failed", "cancelled"}, timeout=40)
            assert final["status"] == "succeeded", (final["error"], final["job"])
            assert NODES[final["job"]["node"]] == gpu, (gpu, final["job"])  # the node whose GPUs are of that type
        assert server.get(docs["l4"]["id"])["request"]["gpu"] == {"type": "l4"}  # as normalised

        # A name the service does not know: refused at once (400), naming the ones it knows.
        status, body, _ = server.request("POST", "/builds", dict(quick, gpu={"type": "v100"}))
        assert status == 400, body
        assert "no GPU type v100 here; this service knows h200 (9.0), a100 (8.0), l4 (8.9), b200 (10.0)" in \
            body["error"], body

        # A type the service knows and no node has: Slurm refuses the job, and the record says why.
        doc = server.submit(dict(quick, gpu={"type": "b200"}))
        final = server.wait_status(doc["id"], {"succeeded", "failed", "cancelled"}, timeout=30)
        assert final["status"] == "failed", final
        assert "sbatch" in final["error"] and "node configuration is not available" in final["error"], final["error"]
    finally:
        server.stop()


@pytest.mark.skipif(bool(os.environ.get("TRTWATCH_SANITIZE")),
                    reason="Slurm's time limit is a minute at least: a drill of over a minute, run once, in the "
                    "release suite")
def test_slurms_time_limit_ends_the_build_as_timed_out_and_the_log_says_so(tmp_path, slurm):
    # The service's cap of one minute, and a build with no "timeout" of its own (so no
    # --time derived from it): Slurm's limit is what ends the job. slurmctld checks
    # limits every 30 s, so it ends 60-90 s after it started.
    server = slurm_server(tmp_path, slurm, "--slurm-arg=--time=1").start()
    try:
        doc = server.submit(LONG)
        events = SseReader(server.port, doc["events_url"])
        job = running_on_a_node(server, doc["id"])["job"]
        assert slurm.job(job["id"])["TimeLimit"] == "00:01:00"  # sbatch kept the --slurm-arg's --time
        live = read_until(events, lambda e: e["event"] == "build_finish")
        final = server.wait_status(doc["id"], {"succeeded", "failed", "cancelled", "timed_out", "interrupted"},
                                   timeout=30)
        assert final["status"] == "timed_out" and final["reason"] == "slurm_time_limit", \
            (final["error"], final["job"], server.log()[-2000:])
        assert final["job"]["state"] == "TIMEOUT" and slurm.job(job["id"])["JobState"] == "TIMEOUT"
        assert final["error"].startswith(f"Slurm job {job['id']} ended TIMEOUT: it reached its Slurm time limit"), \
            final["error"]
        assert final["cancel"] is None, final["cancel"]  # trtwatch asked nothing: Slurm's doing
        # The stream a follower saw live, and the stored log, end as the record does: one
        # build_finish, timed_out with the record's error, never the cancel the worker
        # made of Slurm's SIGTERM.
        finish = live[-1]["data"]
        assert (finish["status"], finish["error"]) == ("timed_out", final["error"]), finish
        # The worker's cancel for Slurm's SIGTERM is told as the time limit it was, never "signal"
        # (reserved for the service being stopped).
        asked = [e["data"]["reason"] for e in live if e["event"] == "cancel_requested"]
        assert set(asked) <= {"timeout"}, asked
        log = SseReader(server.port, doc["events_url"]).read_all()
        finishes = [e for e in log if e["event"] == "build_finish"]
        assert len(finishes) == 1 and finishes[0] is log[-1], [e["event"] for e in log[-3:]]
        assert finishes[0]["data"]["status"] == "timed_out" and finishes[0]["id"] == final["events"], finishes
        with open(final["job"]["stream"]) as f:
            written = [json.loads(line) for line in f if line.strip()]
        if written[-1]["type"] == "build_finish":  # the worker stopped within KillWait: its own words
            assert written[-1]["status"] == "cancelled" and written[-1]["seq"] == finishes[0]["id"], written[-1]
            # Its history entry (where it wrote one before Slurm's SIGKILL) is kept as the
            # record says the build ended.
            status, history, _ = server.request("GET", f"/history?key={final['history_key']}")
            kept = [b["status"] for b in history["builds"] if b["build"] == doc["id"]]
            assert status == 200 and kept in ([], ["timed_out"]), history
    finally:
        server.stop()


@pytest.mark.skipif(bool(os.environ.get("TRTWATCH_SANITIZE")),
                    reason="a drill of the queue and Slurm's scheduling: run once, in the release suite")
def test_sixty_builds_share_the_six_gpus_one_at_a_time_and_all_succeed(tmp_path, slurm):
    server = slurm_server(tmp_path, slurm, "--max-concurrent", "60", "--queue-limit", "0").start()
    try:
        # Without the fleet's timing cache: warm builds would end too soon to fill six GPUs.
        docs = [server.submit({"simulate": "small-cnn", "seed": i + 1, "speed": 25, "timing_cache": False})
                for i in range(60)]
        finals = [server.wait_status(d["id"], {"succeeded", "failed", "cancelled"}, timeout=120) for d in docs]
        assert [f["status"] for f in finals] == ["succeeded"] * 60, [(f["id"], f["error"]) for f in finals]
        assert len({f["job"]["id"] for f in finals}) == 60  # one job each, none lost or run twice
        jobs = tmp_path / "data" / "slurm"
        runs = {}  # (node, GPU) -> each job's (start: its facts, end: its stream's last write)
        for f in finals:
            gpu = (f["job"]["node"], f["job"]["gpu"]["slurm_job_gpus"])
            runs.setdefault(gpu, []).append(((jobs / f"{f['id']}.facts").stat().st_mtime,
                                             (jobs / f"{f['id']}.events.jsonl").stat().st_mtime))
        assert len(runs) == 6, sorted(runs)  # every GPU of the cluster was used
        for gpu, spans in runs.items():
            spans.sort()
            for (_, end), (start, _) in zip(spans, spans[1:]):
                assert start >= end - 0.05, (gpu, spans)  # never two builds on one GPU at once
    finally:
        server.stop()
