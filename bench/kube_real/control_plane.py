"""A throw-away Kubernetes control plane on loopback for the real-cluster benchmark.

etcd (fresh data directory), kube-apiserver (TLS with a CA generated here, a static
bearer token in group system:masters, RBAC) and kube-controller-manager (only the
controllers a batch Job needs), each a child process with its log in the run's
directory. The binaries come from the caller (environment variables); nothing here
builds or downloads anything. Every listener is on 127.0.0.1 with a free port.
"""

import os
import secrets
import signal
import socket
import subprocess
import time

from kube_http import Client, wait_for

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu_seconds(pid):
    """utime + stime of a live process (children not included)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_memory_mb(pid):
    """(VmRSS, VmHWM) in MB."""
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                values[key] = int(value.split()[0]) / 1024.0
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def machine_busy_seconds():
    """CPU seconds spent not idle by the whole machine, all cores (from /proc/stat)."""
    with open("/proc/stat") as f:
        cpu = [int(x) for x in f.readline().split()[1:]]
    idle = cpu[3] + cpu[4]  # idle + iowait
    return (sum(cpu[:8]) - idle) / CLK_TCK


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class Process:
    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.popen = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, env=env,
                                      start_new_session=True)
        self.pid = self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def cpu(self):
        return proc_cpu_seconds(self.pid) if self.alive() else float("nan")

    def memory_mb(self):
        return proc_memory_mb(self.pid) if self.alive() else (float("nan"), float("nan"))

    def tail(self, lines=20):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")

    def stop(self, grace=15):
        """SIGTERM, then SIGKILL after `grace` seconds; returns seconds to exit."""
        start = time.monotonic()
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)
        self.log.close()
        return time.monotonic() - start


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)


def make_certificates(directory):
    """A CA, the API server's serving certificate for 127.0.0.1/localhost, and the
    service-account signing key pair."""
    os.makedirs(directory, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=bench-ca", cwd=directory)
    with open(os.path.join(directory, "san.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n"
                "extendedKeyUsage=serverAuth\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "apiserver.key",
             "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver", cwd=directory)
    _openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-extfile", "san.cnf", "-out", "apiserver.crt",
             cwd=directory)
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=directory)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=directory)


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager in `directory`."""

    def __init__(self, directory, binaries, kcm_qps, kcm_burst, job_syncs):
        self.dir = directory
        self.bin = binaries
        self.kcm_qps, self.kcm_burst, self.job_syncs = kcm_qps, kcm_burst, job_syncs
        self.processes = {}
        self.token = secrets.token_hex(16)
        self.server = ""
        self.kubeconfig = os.path.join(directory, "kubeconfig")
        self.client = None

    def path(self, name):
        return os.path.join(self.dir, name)

    def start(self, timeout=180):
        certs = self.path("certs")
        make_certificates(certs)
        with open(self.path("tokens.csv"), "w") as f:
            f.write('%s,bench-admin,bench-admin,"system:masters"\n' % self.token)
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        self.server = "https://127.0.0.1:%d" % api_port
        with open(self.kubeconfig, "w") as f:
            f.write(KUBECONFIG % {"server": self.server, "ca": os.path.join(certs, "ca.crt"),
                                  "token": self.token})
        etcd_url = "http://127.0.0.1:%d" % etcd_port
        peer_url = "http://127.0.0.1:%d" % peer_port
        self._spawn("etcd", [
            self.bin["etcd"], "--name", "bench", "--data-dir", self.path("etcd-data"),
            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
            "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", "bench=" + peer_url, "--quota-backend-bytes", str(4 << 30),
            "--log-level", "warn"])
        self._spawn("kube-apiserver", [
            self.bin["kube-apiserver"], "--etcd-servers", etcd_url,
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(api_port), "--cert-dir", self.path("apiserver-certs"),
            "--tls-cert-file", os.path.join(certs, "apiserver.crt"),
            "--tls-private-key-file", os.path.join(certs, "apiserver.key"),
            "--client-ca-file", os.path.join(certs, "ca.crt"),
            "--token-auth-file", self.path("tokens.csv"), "--authorization-mode", "RBAC",
            "--service-account-issuer", "https://kubernetes.default.svc",
            "--service-account-key-file", os.path.join(certs, "sa.pub"),
            "--service-account-signing-key-file", os.path.join(certs, "sa.key"),
            "--service-cluster-ip-range", "10.96.0.0/16", "--allow-privileged",
            "--endpoint-reconciler-type", "none", "--profiling=false", "--v", "1"])
        self.client = Client(self.server, self.token, os.path.join(certs, "ca.crt"))
        wait_for(self._ready, timeout, "kube-apiserver /readyz (log: %s)"
                 % self.processes["kube-apiserver"].log_path, interval=0.5)
        # The Job controller, the garbage collector (deleting a Job deletes its pods),
        # namespace and service-account controllers (pods need the default account).
        # No node lifecycle controller: the fake Nodes send no heartbeats and must not
        # be tainted unreachable.
        kcm = self.bin["kube-controller-manager"]
        argv = [kcm, "--kubeconfig", self.kubeconfig,
                "--secure-port", "0", "--leader-elect=false",
                "--controllers", "job,garbagecollector,namespace,serviceaccount",
                "--kube-api-qps", str(self.kcm_qps), "--kube-api-burst", str(self.kcm_burst),
                "--v", "1"]
        # --concurrent-job-syncs came with v1.28; older releases sync 5 Jobs at once.
        usage = subprocess.run([kcm, "--help"], capture_output=True, text=True)
        if "--concurrent-job-syncs" in usage.stdout + usage.stderr:
            argv += ["--concurrent-job-syncs", str(self.job_syncs)]
        self._spawn("kube-controller-manager", argv)

    def _spawn(self, name, argv):
        self.processes[name] = Process(name, argv, self.path(name + ".log"))

    def _ready(self):
        for name, p in self.processes.items():
            if not p.alive():
                raise RuntimeError("%s exited:\n%s" % (name, p.tail()))
        try:
            status, body = self.client.request("GET", "/readyz", allow=(500, 503))
            return status == 200
        except OSError:
            return False

    def check_alive(self):
        for name, p in self.processes.items():
            if not p.alive():
                raise RuntimeError("%s exited:\n%s" % (name, p.tail()))

    def stop(self):
        for name in ("kube-controller-manager", "kube-apiserver", "etcd"):
            if name in self.processes:
                self.processes[name].stop()


KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster:
    server: %(server)s
    certificate-authority: %(ca)s
users:
- name: bench-admin
  user:
    token: %(token)s
contexts:
- name: bench
  context: {cluster: bench, user: bench-admin, namespace: default}
current-context: bench
"""
