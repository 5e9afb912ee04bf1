"""The HTTP proxy kube-apiserver uses for its service/pod proxy in the test cluster.

e2e/cluster/up.sh starts kube-apiserver with HTTP(S)_PROXY=http://127.0.0.1:$OLMV1_EGRESS_PROXY_PORT.
Pod IPs (kwok's 10.244.0.0/16) route nowhere, so this proxy sends a request for POD_IP:PORT to
127.0.0.1:PORT: a Service whose endpoints are a kwok pod's IP and a targetPort equal to a local
server's port (catalogd) is then reachable through the real apiserver proxy path, while every
server still listens on loopback only.

Only https targets work: for CONNECT the apiserver names the pod's address, but an http request
through a proxy carries the client's Host (the apiserver's own address) in its absolute URI (Go's
net/http writes req.Host there), so the pod is unknown; such requests get 502, as does anything
that is not a pod IP.  Stdlib only."""

import ipaddress
import os
import select
import socket
import threading

POD_NET = ipaddress.ip_network("10.244.0.0/16")


def _target(hostport):
    host, _, port = hostport.rpartition(":")
    host = host.strip("[]")
    try:
        if ipaddress.ip_address(host) not in POD_NET:
            return None
        return ("127.0.0.1", int(port))
    except ValueError:
        return None


def _splice(a, b):
    socks = [a, b]
    try:
        while True:
            r, _, _ = select.select(socks, [], [], 60)
            if not r:
                return
            for s in r:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return


def _read_head(conn):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        buf += chunk
        if len(buf) > 1 << 20:
            return None, b""
    head, _, rest = buf.partition(b"\r\n\r\n")
    return head.decode("latin-1"), rest


class EgressProxy:
    """Listens on 127.0.0.1:port until stop(); counts the requests it forwarded."""

    def __init__(self, port=None):
        self.port = int(port or os.environ["OLMV1_EGRESS_PROXY_PORT"])
        self.forwarded = 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(64)
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping = True
        try:
            # Wake accept() up.
            socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
        except OSError:
            pass
        self.thread.join(timeout=10)
        self.sock.close()

    def _serve(self):
        while not self.stopping:
            conn, _ = self.sock.accept()
            if self.stopping:
                conn.close()
                break
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        try:
            head, rest = _read_head(conn)
            if head is None:
                return
            method, url = (head.split("\r\n")[0].split(" ") + ["", ""])[:2]
            if method == "CONNECT":
                target = _target(url)
                if not target:
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                    return
                up = socket.create_connection(target, timeout=10)
                self.forwarded += 1
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    up.sendall(rest)
                _splice(conn, up)
                up.close()
                return
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        except OSError:
            pass
        finally:
            conn.close()
