"""One task of a distributed job checks the addresses its controller gave it.

Usage: peer_check.py tf | peer_check.py volcano TASK... (the job's task names).

tf: reads TF_CONFIG; volcano: reads VC_<TASK>_HOSTS, VC_<TASK>_NUM and the svc
plugin's /etc/volcano/<task>.host files (port 2222). Then: its own task is the one
its hostname names; every address resolves (getaddrinfo) and to a distinct IP; it
listens on its own address and answers each connection with its identity; it
connects to every other task's address (retrying until a deadline, peers start at
different times) and checks who answers; it stays up until every peer has connected
to it, so none finds its peers gone. Exits 0 when all that holds, else 1; with
PEER_STAY set it then stays up (a parameter server, which never exits on its own).
"""
import json
import os
import socket
import sys
import threading
import time

DEADLINE = time.monotonic() + float(os.environ.get("PEER_DEADLINE_S", "120"))
PORT = 2222


def fail(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


def tf_cluster():
    tf = json.loads(os.environ["TF_CONFIG"])
    me = (tf["task"]["type"], int(tf["task"]["index"]))
    tasks = {}
    for kind, addrs in tf["cluster"].items():
        for i, addr in enumerate(addrs):
            host, port = addr.rsplit(":", 1)
            tasks[(kind, i)] = (host, int(port))
    return me, tasks


def volcano_cluster(names):
    tasks = {}
    me = None
    for name in names:
        key = name.replace("-", "_")
        env_hosts = os.environ["VC_%s_HOSTS" % key.upper()].split(",")
        if int(os.environ["VC_%s_NUM" % key.upper()]) != len(env_hosts):
            fail("VC_%s_NUM is not the number of VC_%s_HOSTS" % (key.upper(), key.upper()))
        path = "/etc/volcano/%s.host" % key
        try:
            file_hosts = open(path).read().split()
        except OSError as e:
            fail("cannot read %s: %s" % (path, e))
        if file_hosts != env_hosts:
            fail("%s lists %s, VC_%s_HOSTS %s" % (path, file_hosts, key.upper(), env_hosts))
        for i, host in enumerate(env_hosts):
            tasks[(name, i)] = (host, PORT)
            if host.split(".")[0] == socket.gethostname():
                me = (name, i)
    if me is None:
        fail("hostname %s is none of the svc hosts" % socket.gethostname())
    if int(os.environ.get("VC_TASK_INDEX", "-1")) != me[1]:
        fail("VC_TASK_INDEX %s, hostname says %d" % (os.environ.get("VC_TASK_INDEX"), me[1]))
    return me, tasks


def resolve(host):
    infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
    return infos[0][4][0]


def main():
    mode = sys.argv[1]
    if mode == "tf":
        me, tasks = tf_cluster()
        # The operator names the pod, hence its hostname, "<job>-<type>-<index>".
        want = "-%s-%d" % me
        if not socket.gethostname().endswith(want):
            fail("TF_CONFIG task %s:%d but hostname %s" % (me[0], me[1], socket.gethostname()))
    else:
        me, tasks = volcano_cluster(sys.argv[2:])
    ident = "%s:%d" % me
    ips = {}
    for task, (host, _) in sorted(tasks.items()):
        try:
            ips[task] = resolve(host)
        except OSError as e:
            fail("%s (%s:%d) does not resolve: %s" % (host, task[0], task[1], e))
    if len(set(ips.values())) != len(ips):
        fail("the addresses are not distinct: %s" % sorted(ips.items()))

    host, port = tasks[me]
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind((ips[me], port))
    except OSError as e:
        fail("cannot listen on my address %s (%s:%d): %s" % (host, ips[me], port, e))
    srv.listen(16)
    srv.settimeout(1)
    peers = len(tasks) - 1
    served = []

    def serve():
        while len(served) < peers and time.monotonic() < DEADLINE:
            try:
                conn, addr = srv.accept()
            except socket.timeout:
                continue
            with conn:
                conn.sendall((ident + "\n").encode())
                served.append(conn.recv(64).decode().strip())

    server = threading.Thread(target=serve)
    server.start()
    for task, (peer_host, peer_port) in sorted(tasks.items()):
        if task == me:
            continue
        while True:
            try:
                with socket.create_connection((peer_host, peer_port), timeout=2) as c:
                    got = c.makefile().readline().strip()
                    c.sendall((ident + "\n").encode())
                break
            except OSError as e:
                if time.monotonic() > DEADLINE:
                    fail("%s:%d unreachable at %s:%d: %s" % (task[0], task[1], peer_host, peer_port, e))
                time.sleep(0.2)
        if got != "%s:%d" % task:
            fail("%s:%d answered %r" % (peer_host, peer_port, got))
    server.join()
    if len(served) < peers:
        fail("only %d of %d peers connected to me" % (len(served), peers))
    print("ok %s at %s (%s) reached %d peers, %d distinct addresses" %
          (ident, host, ips[me], peers, len(set(ips.values()))), flush=True)
    # A parameter server serves until the operator stops it.
    while os.environ.get("PEER_STAY"):
        time.sleep(1)


main()
