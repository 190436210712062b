"""A real single-node SLURM cluster on this machine for tests: munged, slurmctld and slurmd with a
config written here, on private ports and paths; stopped by PID afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
# The SLURM executor plugin deletes every SLURM_* variable (SLURM_CONF included) before it calls
# srun inside a job, so the job step can only find the config at the default path.
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
MARKER = "# written by edgebench tests/slurm_cluster.py\n"


def available() -> bool:
    ours = not SYSTEM_CONF.exists() or SYSTEM_CONF.read_text().startswith(MARKER)
    return (
        all(shutil.which(d) for d in DAEMONS)
        and shutil.which("sbatch") is not None
        and os.geteuid() == 0
        and ours
    )


def _conf(root: Path, host: str) -> str:
    return f"""ClusterName=edgebench-test
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={root}/munge.socket
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
SlurmctldPort=16917
SlurmdPort=16918
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=600
JobCompType=jobcomp/filetxt
JobCompLoc={root}/jobcomp.txt
NodeName={host} CPUs={os.cpu_count()} RealMemory=20000 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def _wait(check, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise TimeoutError(f"{what} did not come up within {seconds:.0f} s")


def _munged(root: Path, key: Path) -> subprocess.Popen:
    """The test cluster's munge daemon, its socket and files in `root`."""
    return subprocess.Popen(
        [
            "munged",
            "--foreground",
            "--force",
            f"--socket={root}/munge.socket",
            f"--key-file={key}",
            f"--pid-file={root}/munged.pid",
            f"--log-file={root}/munged.log",
            f"--seed-file={root}/munged.seed",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@contextmanager
def slurm_cluster(root: Path):
    """Yields the environment (SLURM_CONF) under which sbatch/squeue reach the test cluster."""
    host = socket.gethostname().split(".")[0]
    for sub in ("state", "spool"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = SYSTEM_CONF
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(MARKER + _conf(root, host))  # never replaces a real cluster's file (see available)
    env = {**os.environ, "SLURM_CONF": str(conf)}
    procs: list[subprocess.Popen] = []
    try:
        procs.append(_munged(root, key))
        _wait(lambda: (root / "munge.socket").exists(), 30, "munged")
        for daemon in (["slurmctld", "-D", "-c", "-f", str(conf)], ["slurmd", "-D", "-f", str(conf)]):
            procs.append(
                subprocess.Popen(daemon, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )

        def idle() -> bool:
            out = subprocess.run(
                ["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True, timeout=30
            ).stdout
            return "idle" in out

        _wait(idle, 90, "the SLURM node")
        yield env
    finally:
        for proc in reversed(procs):  # stop exactly what we started, by PID
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=30)
        conf.unlink(missing_ok=True)
