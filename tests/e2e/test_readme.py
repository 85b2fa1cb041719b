"""Issue 38 item 5, the README as a user meets it: every shell block marked
`<!-- readme-test: NAME -->` runs as written against the real binary (`build/trtwatch`
is this build's; the service block's port 8470 is swapped for a free one, so that
parallel tests cannot collide: nothing else is changed), the usage synopsis names every
flag of `trtwatch serve`, and the documentation index links every docs/*.md."""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import time

import pytest

from conftest import BIN, SOURCE_DIR, run

README = (SOURCE_DIR / "README.md").read_text()


def marked_blocks():
    """NAME -> the text of the ```sh block after `<!-- readme-test: NAME -->`."""
    blocks = {}
    for m in re.finditer(r"<!-- readme-test: ([a-z-]+) -->\n```sh\n(.*?)\n```", README, re.S):
        blocks[m.group(1)] = m.group(2) + "\n"
    return blocks


def workdir(tmp_path):
    """A folder where `build/trtwatch` is this build's binary, as in a clone."""
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "trtwatch").symlink_to(BIN)
    return tmp_path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def json_documents(text):
    """The JSON objects written one after another (curl adds no newline between bodies)."""
    decoder = json.JSONDecoder()
    docs, i = [], text.find("{")
    while 0 <= i < len(text):
        doc, end = decoder.raw_decode(text, i)
        docs.append(doc)
        i = text.find("{", end)
    return docs


def test_the_runnable_blocks_are_marked():
    assert set(marked_blocks()) == {"examples", "service"}


def test_examples_block_runs_line_by_line_with_the_exit_codes_its_comments_give(tmp_path):
    cwd = workdir(tmp_path)
    lines = [line for line in marked_blocks()["examples"].splitlines() if line.strip()]
    assert len(lines) == 4
    for line in lines:
        # A comment "exit N" gives the code; "echo $?   # N" prints it; else 0.
        expected = re.search(r"#\s*exit (\d+)", line)
        r = subprocess.run(["bash", "-c", line], cwd=cwd, capture_output=True, text=True, timeout=120)
        assert r.returncode == (int(expected.group(1)) if expected else 0), (line, r.stderr[-2000:])
        echoed = re.search(r"echo \$\?\s+#\s*(\d+)", line)
        if echoed:
            assert r.stdout.strip() == echoed.group(1), (line, r.stdout)
    events = [json.loads(x) for x in (cwd / "events.jsonl").read_text().splitlines() if x.strip()]
    assert events[-1]["type"] == "build_finish" and events[-1]["status"] == "timed_out"
    assert "traceEvents" in json.loads((cwd / "timeline.json").read_text())


def test_service_block_runs_as_written(tmp_path):
    """The curl session of "The build service": serve, submit with the JSON Content-Type
    (a POST without it gets 415), follow the events to build_finish, read the record,
    cancel a long build (202), stop the service with SIGTERM."""
    cwd = workdir(tmp_path)
    port = free_port()
    script = marked_blocks()["service"].replace("8470", str(port))
    proc = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=90)
    finally:
        pgid = proc.pid
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the service, stopped by the block's `kill %1`
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.killpg(pgid, signal.SIGKILL)
            pytest.fail("the service did not stop on the block's kill %1")
    assert proc.returncode == 0, err[-3000:]
    assert "event: build_finish" in out, out[-3000:]
    records = json_documents(out.rsplit("\n\n", 1)[-1])  # after the event stream: the bodies, end to end
    assert any(r.get("status") == "succeeded" and r.get("request", {}).get("simulate") == "small-cnn" for r in records), out
    assert any(r.get("status") == "cancelling" for r in records), out


def test_usage_synopsis_names_every_serve_flag():
    usage = README.split("## Usage", 1)[1].split("```", 2)[1]
    help_text = run("serve", "--help").stdout
    flags = sorted(set(re.findall(r"(?m)^\s+(--[a-z][a-z-]+)", help_text)) - {"--help"})
    assert flags, help_text
    missing = [f for f in flags if not re.search(re.escape(f) + r"(?![a-z-])", usage)]
    assert missing == [], f"README's usage lacks {missing}"


def test_usage_synopsis_has_history_under_build_not_cache():
    usage = README.split("## Usage", 1)[1].split("```", 2)[1].splitlines()
    history = next(i for i, line in enumerate(usage) if "--history DIR | --no-history" in line)
    above = next(line for line in reversed(usage[:history]) if line.startswith("trtwatch "))
    assert above.startswith("trtwatch build"), above


def test_documentation_index_links_every_document():
    index = README.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    docs = sorted(p.name for p in (SOURCE_DIR / "docs").glob("*.md"))
    missing = [name for name in docs if f"(docs/{name})" not in index]
    assert missing == [], f"README's documentation index lacks {missing}"
