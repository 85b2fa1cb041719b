"""A throwaway Slurm cluster for end-to-end tests: munge, one slurmctld and three slurmd
on this machine (Debian's Slurm 22.05 runs several slurmd per host), each node with two
typed fake GPUs (character devices made with mknod, so jobs get CUDA_VISIBLE_DEVICES and
SLURM_JOB_GPUS): n1 h200, n2 a100, n3 l4. Everything lives under one temporary folder
the slurm user can traverse; teardown cancels the jobs (their processes outlive a killed
slurmd), stops the slurmd, then slurmctld, and removes the folder.

It needs root (slurmd runs jobs as their submitter and mknod makes devices): the test
is skipped, saying so, only where the packages are absent or the user is not root.
Observed facts it relies on: ../../../shared/reference/cluster-notes.md (in the
project's notes) and docs/slurm.md."""
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

NODES = {"n1": "h200", "n2": "a100", "n3": "l4"}
GPUS_PER_NODE = 2
_TOOLS = ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo", "munge", "munged")


def _missing_tools():
    return [t for t in _TOOLS if not shutil.which(t) and not os.path.exists(f"/usr/sbin/{t}")]


def _free_ports(count):
    """`count` consecutive free TCP ports of 127.0.0.1, the first one returned."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            first = s.getsockname()[1]
        if first + count >= 65535:
            continue
        try:
            probes = []
            for p in range(first, first + count):
                probe = socket.socket()
                probes.append(probe)
                probe.bind(("127.0.0.1", p))
            return first
        except OSError:
            continue
        finally:
            for probe in probes:
                probe.close()
    raise AssertionError("no run of free ports for slurmctld and the slurmd")


def _sbin(tool):
    return shutil.which(tool) or f"/usr/sbin/{tool}"


class SlurmCluster:
    def __init__(self):
        missing = _missing_tools()
        if missing:
            pytest.skip("no Slurm/munge (" + ", ".join(missing) + "): apt-get install slurmctld slurmd "
                        "slurm-client munge (scripts/setup.sh installs them)")
        if os.geteuid() != 0:
            pytest.skip("a test Slurm cluster needs root (slurmd runs jobs as their submitter; fake GPUs need mknod)")
        self._ensure_munge()
        # Under /tmp, not a 0700 mktemp folder alone: slurmctld runs as slurm and hangs
        # silently when it cannot traverse to its state folder.
        self.dir = tempfile.mkdtemp(prefix="trtwatch-slurm-")
        os.chmod(self.dir, 0o755)
        self.slurmd_pids = {}
        self.ctld_pid = None
        try:
            self._write_config()
            self.env = dict(os.environ, SLURM_CONF=self.conf)
            self._start()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _ensure_munge():
        if subprocess.run(["munge", "-n"], capture_output=True).returncode == 0:
            return
        subprocess.run(["install", "-d", "-o", "munge", "-g", "munge", "-m", "0755", "/run/munge"], check=True)
        subprocess.run(["runuser", "-u", "munge", "--", _sbin("munged")], check=True, capture_output=True)
        deadline = time.time() + 5
        while subprocess.run(["munge", "-n"], capture_output=True).returncode != 0:
            if time.time() > deadline:
                raise AssertionError("munged did not start (see /var/log/munge/munged.log)")
            time.sleep(0.05)

    def _write_config(self):
        b = self.dir
        slurm = pwd.getpwnam("slurm")
        for sub in ("ctld", "log", "dev", *(f"spool/{n}" for n in NODES)):
            os.makedirs(f"{b}/{sub}", mode=0o755, exist_ok=True)
        for sub in ("ctld", "log"):
            os.chown(f"{b}/{sub}", slurm.pw_uid, slurm.pw_gid)
        ctld_port = _free_ports(1 + len(NODES))
        self.ports = {n: ctld_port + 1 + i for i, n in enumerate(NODES)}
        node_lines, gres_lines = [], []
        for i, (node, gpu) in enumerate(NODES.items()):
            devices = []
            for g in range(GPUS_PER_NODE):
                path = f"{b}/dev/{node}-nvidia{g}"
                os.mknod(path, 0o666 | 0o020000, os.makedev(195, i * GPUS_PER_NODE + g))
                devices.append(path)
            node_lines.append(f"NodeName={node} NodeHostname=localhost NodeAddr=127.0.0.1 Port={self.ports[node]} "
                              f"CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 "
                              f"Gres=gpu:{gpu}:{GPUS_PER_NODE}")
            gres_lines.extend(f"NodeName={node} Name=gpu Type={gpu} File={d}" for d in devices)
        self.conf = f"{b}/slurm.conf"
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=trtwatch-ci
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation={b}/ctld
SlurmdSpoolDir={b}/spool/%n
SlurmctldPidFile={b}/ctld/slurmctld.pid
SlurmdPidFile={b}/slurmd-%n.pid
SlurmctldLogFile={b}/log/slurmctld.log
SlurmdLogFile={b}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={b}/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
MinJobAge=3600
# A job past its time limit, or cancelled, gets SIGTERM, then SIGKILL KillWait seconds
# later (Slurm's default: 30) and no minutes of grace past its --time (OverTimeLimit):
# the drills' ends stay short.
KillWait=2
OverTimeLimit=0
SlurmdTimeout=5
MessageTimeout=5
SchedulerParameters=sched_min_interval=0
{chr(10).join(node_lines)}
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        with open(f"{b}/gres.conf", "w") as f:
            f.write("AutoDetect=off\n" + "\n".join(gres_lines) + "\n")
        with open(f"{b}/cgroup.conf", "w") as f:
            f.write("CgroupPlugin=cgroup/v1\n")

    def _start(self):
        subprocess.run([_sbin("slurmctld")], env=self.env, check=True, capture_output=True, timeout=30)
        self.ctld_pid = self._read_pid(f"{self.dir}/ctld/slurmctld.pid")
        for node in NODES:
            self.start_node(node)
        self.wait_idle(list(NODES), timeout=20)

    def _read_pid(self, path, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with open(path) as f:
                    return int(f.read().strip())
            except (OSError, ValueError):
                time.sleep(0.02)
        raise AssertionError(f"no pid in {path}: see {self.dir}/log")

    def start_node(self, node):
        pid_file = f"{self.dir}/slurmd-{node}.pid"
        if os.path.exists(pid_file):
            os.remove(pid_file)
        subprocess.run([_sbin("slurmd"), "-N", node], env=self.env, check=True, capture_output=True, timeout=30)
        self.slurmd_pids[node] = self._read_pid(pid_file)

    def restart_controller(self):
        """slurmctld stopped (saving its state) and started again; jobs run on meanwhile."""
        _stop_all([self.ctld_pid], timeout=10)
        if os.path.exists(f"{self.dir}/ctld/slurmctld.pid"):  # a clean stop removes it
            os.remove(f"{self.dir}/ctld/slurmctld.pid")
        subprocess.run([_sbin("slurmctld")], env=self.env, check=True, capture_output=True, timeout=30)
        self.ctld_pid = self._read_pid(f"{self.dir}/ctld/slurmctld.pid")

    def kill_node(self, node):
        """slurmd of `node` killed (SIGKILL), as a node that fails; its jobs' processes are
        killed too, as they would die with a real node."""
        pid = self.slurmd_pids.pop(node)
        os.kill(pid, signal.SIGKILL)

    def sinfo_states(self):
        out = self.run("sinfo", "-h", "-N", "-o", "%N %T").stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def wait_idle(self, nodes, timeout):
        deadline = time.time() + timeout
        states = {}
        while time.time() < deadline:
            states = self.sinfo_states()
            if all(states.get(n) in ("idle", "mixed", "allocated") for n in nodes):
                return
            time.sleep(0.1)
        raise AssertionError(f"nodes not up within {timeout} s: {states}; logs in {self.dir}/log")

    def run(self, *cmd, check=True):
        return subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, timeout=30, check=check)

    def job(self, job_id):
        """scontrol's fields of one job, as a dict."""
        out = self.run("scontrol", "-o", "show", "job", str(job_id)).stdout
        return dict(f.split("=", 1) for f in out.split() if "=" in f)

    def close(self):
        if self.ctld_pid:
            self.run("scancel", "--user=root", check=False)
        # All slurmd at once (each takes a second or two to stop), then the controller,
        # whose state is thrown away: it gets a second before SIGKILL.
        _stop_all(list(self.slurmd_pids.values()), timeout=5)
        self.slurmd_pids.clear()
        if self.ctld_pid:
            _stop_all([self.ctld_pid], timeout=1)
            self.ctld_pid = None
        shutil.rmtree(self.dir, ignore_errors=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def _stop_all(pids, timeout):
    """SIGTERM to each of `pids`; SIGKILL to those still alive after `timeout` seconds."""
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)
    deadline = time.time() + timeout
    while any(_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.02)
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def slurm():
    cluster = SlurmCluster()
    yield cluster
    cluster.close()
