#!/usr/bin/env python3
"""Artifact transfer throughput: trtwatch serve against Debian's nginx on loopback, in
the same run, on the same file (issue 23: download >= 70 % of nginx, upload >= 50 %).

  download: a 1 GiB engine, `curl -o /dev/null`, from GET /builds/{id}/engine and from
            nginx serving the same file (sendfile on, its default);
  upload:   a 1 GiB file, `curl -T`, to PUT /models/bench (streamed to disk, hashed,
            fsync'd, renamed) and to nginx's WebDAV PUT (written to its temp file,
            renamed, no fsync).

Needs the TensorRT test double's build (build/tests/trtwatch_on_tensorrt_double and
build/fake_tensorrt/10) to make a real engine, curl, and nginx (apt-get install nginx;
only for this benchmark, never in CI). Prints MB/s (medians of --runs) and the ratios.

  python3 bench/artifact_transfer.py [--build build] [--size-mib 1024] [--runs 3]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

MiB = 1024 * 1024


def curl(*args):
    out = subprocess.run(["curl", "-sS", "-f", *args], capture_output=True, text=True, check=True).stdout
    return float(out.strip())


def start_trtwatch(build, data, size):
    libs = [os.path.join(build, "fake_tensorrt", "10"), os.environ.get("LD_LIBRARY_PATH", "")]
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(filter(None, libs)),
               FAKE_TENSORRT_ENGINE_BYTES=str(size))
    log = open(os.path.join(data, "serve.log"), "w+")
    proc = subprocess.Popen([os.path.join(build, "tests", "trtwatch_on_tensorrt_double"), "serve", "--listen", "127.0.0.1:0",
                             "--data-dir", os.path.join(data, "trtwatch"), "--max-upload-size", "64G"],
                            stdout=subprocess.DEVNULL, stderr=log, env=env)
    for _ in range(300):
        log.seek(0)
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read())
        if m:
            return proc, f"http://127.0.0.1:{m.group(1)}"
        time.sleep(0.05)
    raise SystemExit("trtwatch serve did not start: " + open(log.name).read())


def api(base, method, path, body=None):
    req = urllib.request.Request(base + path, data=body, method=method,
                                 headers={"Content-Type": "application/json"} if body else {})
    with urllib.request.urlopen(req) as res:
        return json.loads(res.read() or b"null")


def make_engine(base):
    api(base, "PUT", "/models/bench", b"onnx")
    build = api(base, "POST", "/builds", json.dumps({"model": "models:bench"}).encode())
    while True:
        record = api(base, "GET", f"/builds/{build['id']}")
        if record["status"] not in ("queued", "running"):
            break
        time.sleep(0.2)
    if record["status"] != "succeeded":
        raise SystemExit(f"the engine build {record['status']}: {record['error']}")
    return record


def start_nginx(nginx_bin, data, root):
    port_probe = __import__("socket").socket()
    port_probe.bind(("127.0.0.1", 0))
    port = port_probe.getsockname()[1]
    port_probe.close()
    conf = os.path.join(data, "nginx.conf")
    dav = os.path.join(data, "dav")
    os.makedirs(dav)
    with open(conf, "w") as f:
        # As root, nginx's workers would run as nobody, who may not read the service's private data dir.
        user = "user root;" if os.geteuid() == 0 else ""
        f.write(f"""daemon off; {user} worker_processes 1; pid {data}/nginx.pid; error_log {data}/nginx.err;
events {{ worker_connections 64; }}
http {{
  access_log off; sendfile on; tcp_nopush on;
  client_body_temp_path {data}/body; proxy_temp_path {data}/proxy; fastcgi_temp_path {data}/fcgi;
  uwsgi_temp_path {data}/uwsgi; scgi_temp_path {data}/scgi;
  server {{
    listen 127.0.0.1:{port};
    location /files/ {{ alias {root}/; }}
    location /dav/ {{ alias {dav}/; dav_methods PUT; client_max_body_size 0; create_full_put_path on; }}
  }}
}}
""")
    proc = subprocess.Popen([nginx_bin, "-e", f"{data}/nginx.err", "-c", conf, "-p", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(base + "/files/none")
        except urllib.error.HTTPError:
            return proc, base
        except OSError:
            time.sleep(0.05)
    raise SystemExit("nginx did not start")


def median_rate(runs, fn):
    return statistics.median(fn() for _ in range(runs)) / 1e6  # curl's bytes/s -> MB/s


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--size-mib", type=int, default=1024)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx",
                   help="nginx binary (an unpacked `apt-get download nginx` works too)")
    a = p.parse_args()
    if not os.path.exists(a.nginx):
        raise SystemExit("nginx is missing: apt-get install nginx (for this benchmark only), or --nginx PATH")
    size = a.size_mib * MiB
    with tempfile.TemporaryDirectory(prefix="trtwatch-bench-") as data:
        trt, base = start_trtwatch(a.build, data, size)
        nginx = None
        try:
            record = make_engine(base)
            engine = record["engine"]["path"]
            nginx, nbase = start_nginx(a.nginx, data, os.path.dirname(engine))
            name = os.path.basename(engine)
            get = lambda url: lambda: curl("-o", "/dev/null", "-w", "%{speed_download}", url)
            put = lambda url: lambda: curl("-T", engine, "-o", "/dev/null", "-w", "%{speed_upload}", url)
            results = {
                "download": (median_rate(a.runs, get(base + record["engine"]["url"])),
                             median_rate(a.runs, get(f"{nbase}/files/{name}"))),
                "upload": (median_rate(a.runs, put(base + "/models/up")),
                           median_rate(a.runs, put(f"{nbase}/dav/up.bin"))),
            }
        finally:
            trt.terminate()
            trt.wait()
            if nginx:
                nginx.terminate()
                nginx.wait()
    goals = {"download": 0.70, "upload": 0.50}
    print(f"{a.size_mib} MiB over loopback, median of {a.runs} runs (curl)")
    print(f"{'':10}{'trtwatch MB/s':>15}{'nginx MB/s':>13}{'ratio':>8}{'goal':>7}")
    failed = False
    for what, (ours, theirs) in results.items():
        ratio = ours / theirs
        failed |= ratio < goals[what]
        print(f"{what:10}{ours:15.0f}{theirs:13.0f}{ratio:8.2f}{goals[what]:7.2f}{'' if ratio >= goals[what] else '  BELOW GOAL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
