"""What the build-group tests share (test_service_groups.py, test_slurm_groups.py): a
group's document, waiting for a group to end, and a download."""
import http.client

from waiting import wait_for

FINAL = ("succeeded", "failed", "cancelled", "timed_out", "interrupted")


def group(server, gid):
    status, doc, _ = server.request("GET", f"/groups/{gid}")
    assert status == 200, (status, doc)
    return doc


def wait_group(server, gid, timeout):
    return wait_for(lambda: (lambda d: d if d["state"] in FINAL else None)(group(server, gid)), timeout,
                    f"group {gid} ended")


def download(server, path):
    """GET path: status, body bytes and headers."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", path)
    res = conn.getresponse()
    body = res.read()
    conn.close()
    return res.status, body, dict(res.getheaders())
