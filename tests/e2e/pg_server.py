"""A throwaway PostgreSQL server for end-to-end tests, as tests/support/postgres_server.h:
initdb into a temporary folder, started on a free port of 127.0.0.1 (unix socket in the
same folder), fsync off, stopped at once (-m immediate) and removed at the end. As root
the server runs as `postgres` (initdb refuses root; `nobody` where there is no such user,
or TRTWATCH_PG_USER). Skips the test when the binaries are missing. Importable without
pytest (bench/replica_soak.py uses PgServer with its own settings)."""
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile

try:
    import pytest
except ImportError:  # a bench, not a test: PgServer alone
    pytest = None


def _bin_dir():
    env = os.environ.get("TRTWATCH_PG_BIN")
    if env:
        return env
    found = sorted(d for d in glob.glob("/usr/lib/postgresql/*/bin") if os.path.exists(d + "/initdb"))
    return found[-1] if found else None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_user():
    user = os.environ.get("TRTWATCH_PG_USER")
    if user:
        return user
    try:
        pwd.getpwnam("postgres")
        return "postgres"
    except KeyError:
        return "nobody"


class PgServer:
    def __init__(self, settings=None):
        """settings: server settings (-c NAME=VALUE) instead of the tests' fsync=off,
        full_page_writes=off."""
        self.bin = _bin_dir()
        if not self.bin:
            message = "no PostgreSQL server binaries (apt-get install postgresql-15)"
            if pytest is None:
                raise RuntimeError(message)
            pytest.skip(message)
        self.settings = settings if settings is not None else {"fsync": "off", "full_page_writes": "off"}
        self.dir = tempfile.mkdtemp(prefix="trtwatch-pg-")
        self.port = _free_port()
        self.as_postgres = os.geteuid() == 0
        self.user = _server_user() if self.as_postgres else None
        if self.as_postgres:
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self._run("initdb", "-D", f"{self.dir}/data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--locale=C.UTF-8", "--no-sync", "--no-instructions")
        # A port found free may be taken by another test before the server binds it:
        # the first start tries another one.
        for _ in range(2):
            if self.start(check=False).returncode == 0:
                return
            self.port = _free_port()
        self.start()

    def _run(self, tool, *args, check=True):
        cmd = [f"{self.bin}/{tool}", *args]
        if self.as_postgres:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise AssertionError(f"{tool} failed: {r.stdout}{r.stderr}")
        return r

    def start(self, check=True):
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir}"
        options += "".join(f" -c {k}={v}" for k, v in self.settings.items())
        return self._run("pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/pg.log", "-w", "-s", "-o", options,
                         "start", check=check)

    def stop(self):
        self._run("pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "-s", "stop", check=False)

    def uri(self, db):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def psql(self, db, sql):
        """Runs `sql` in `db` with psql; returns its output (unaligned, tuples only)."""
        r = self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db,
                      "-v", "ON_ERROR_STOP=1", "-Atc", sql)
        return r.stdout.strip()

    def create_database(self, name):
        self.psql("postgres", f"CREATE DATABASE {name}")
        return self.uri(name)

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


if pytest is not None:
    @pytest.fixture(scope="module")
    def pg():
        server = PgServer()
        yield server
        server.close()
