"""A one-node Slurm cluster (Debian's slurm-wlm and munge) started in a folder of its own: its own munge key and
socket, slurm.conf, state, spool and logs, free loopback ports. Used by test_slurm.py and by
Benchmarks/batch_benchmark.py's array row. Every wait is bounded; the daemons are stopped by their PIDs."""
import os
import shutil
import socket
import subprocess

from daemons import free_port, stop, wait_for

COMMANDS = ["munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo"]


def missing_commands():
    """The commands a cluster needs that are not installed."""
    return [name for name in COMMANDS if shutil.which(name) is None]


class Cluster:
    """munged, slurmctld and slurmd for one node, all in `root`."""

    def __init__(self, root):
        self.root = root
        self.processes = []
        self.env = dict(os.environ, SLURM_CONF=str(root / "slurm.conf"))

    def start(self):
        root = self.root
        for folder in ("munge", "state", "spool", "log"):
            (root / folder).mkdir(mode=0o700)
        key, sock = root / "munge" / "munge.key", root / "munge" / "munge.socket"
        subprocess.run(["mungekey", "--create", "--keyfile", key, "--bits", "1024"], check=True, capture_output=True)
        self.launch("munged", ["munged", "--foreground", "--force", f"--key-file={key}", f"--socket={sock}",
                               f"--pid-file={root}/munge/munged.pid", f"--log-file={root}/log/munged.log",
                               f"--seed-file={root}/munge/seed"])
        wait_for(sock.exists, 10, "munged made no socket")
        node = socket.gethostname().split(".")[0]
        (root / "slurm.conf").write_text(f"""ClusterName=tessera-test
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
NodeName={node} NodeAddr=127.0.0.1 CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=8000 State=UNKNOWN
PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP
""")
        conf = str(root / "slurm.conf")
        self.launch("slurmctld", ["slurmctld", "-D", "-i", "-f", conf])
        self.launch("slurmd", ["slurmd", "-D", "-f", conf])
        wait_for(lambda: self.slurm("sinfo", "-h", "-o", "%T").stdout.strip() == "idle", 30, "the node was not idle")

    def launch(self, name, command):
        log = open(self.root / "log" / f"{name}.out", "wb")
        self.processes.append(subprocess.Popen([str(c) for c in command], stdout=log, stderr=subprocess.STDOUT,
                                               env=self.env))

    def slurm(self, *args, timeout=60):
        return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=self.env, timeout=timeout)

    def submit(self, *args, timeout=60):
        result = self.slurm("sbatch", "--parsable", *args, timeout=timeout)
        assert result.stdout.strip(), result.stderr
        return result

    def is_queued(self, job):
        return self.slurm("squeue", "-h", "-j", job).stdout.strip() != ""

    def logs(self):
        return "\n".join(f"== {path.name}\n" + path.read_text(errors="replace")[-1500:]
                         for path in sorted((self.root / "log").iterdir()))

    def stop(self):
        """Stops what it started, by PID, slurmd first."""
        for process in reversed(self.processes):
            stop(process)
