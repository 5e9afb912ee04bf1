# node.sh: sourced by up.sh after full.sh when OLMV1_NODE=real (needs up.sh's variables and
# functions). Adds one real node, `real-node-0`: containerd + runc (Debian), kubelet and
# kube-proxy (iptables) of the control plane's Kubernetes build, CNI bridge/host-local/portmap,
# and CoreDNS on the kubelet's clusterDNS address. The kwok node gets a NoSchedule taint, so
# ordinary Pods (the install file's Deployments) land on the real node.
#
# Everything of the node lives in its own network + mount namespace (held by a `pause` process)
# and its own cgroup, both numbered N (1-250, the first free one):
#   root netns  olmv1hN 198.18.N.1/30 --veth-- eth0 198.18.N.2/30  node netns (kubelet, containerd,
#               kube-proxy, CoreDNS; bridge cni0 198.19.N.1/24 with the Pods)
#   - the node and Pods reach the apiserver and the registry (both on 127.0.0.1 of the host)
#     at 198.18.N.1:<port>: a nat chain OLMV1-NODE-N DNATs exactly those two ports to 127.0.0.1
#     (route_localnet on olmv1hN only); `kubernetes.default` has that address as its endpoint;
#   - from the node, the host accepts only those DNAT'ed connections and replies (filter chain
#     OLMV1-NODE-N on INPUT), not e.g. a host service listening on 0.0.0.0;
#   - the host routes 198.19.N.0/24 to the node (so the apiserver reaches Pods, e.g. webhooks);
#     neither namespace forwards anything elsewhere: the host keeps ip_forward as it is (off here)
#     and the node netns has no default route, no masquerade: Pod traffic cannot leave the machine.
#   - the mount namespace keeps containerd's /run/containerd, the netns and volume mounts and
#     /var/log/containers private, so they vanish with the node's processes (even after kill -9).
#   - cgroup /olmv1-N in every hierarchy: the node's processes in olmv1-N/node, the kubelet's
#     Pods in olmv1-N/kubepods; node-down.sh freezes it and kills every PID in it.
# See README.md ("The real node").

NODE_DIR=$STATE_DIR/node
NODE_NAME=real-node-0
SERVICE_CIDR=10.0.0.0/24
OLMV1_BIN=${OLMV1_BIN:-$REPO_ROOT/build/cli/olmv1}

node_need() { # what to check, message
  eval "$1" >/dev/null 2>&1 || fail apiserver "real node: $2"
}
node_need '[ "$(id -u)" = 0 ]' "needs root (network namespaces, cgroups, containerd)"
node_need 'command -v containerd && command -v runc' "containerd and runc missing (make deps)"
node_need '[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/portmap ]' \
  "CNI plugins missing in /usr/lib/cni (make deps: containernetworking-plugins)"
node_need 'command -v iptables && command -v nsenter && command -v unshare && command -v cc' \
  "iptables, nsenter, unshare and cc are needed"
node_need '[ -x "$OLMV1_BIN" ]' "$OLMV1_BIN missing (make build): it pushes the pause image"
node_need '[ -x "$OLMV1_K8S_BIN/kubelet" ] && [ -x "$OLMV1_COREDNS_BIN/coredns" ]' \
  "kubelet/coredns missing (build.sh with OLMV1_NODE=real)"

# ------------------------------------------------------------ number, addresses, cgroup
# Under up.sh's machine-wide port lock, so two clusters cannot pick the same N.
NODE_INDEX=
for n in $(seq 1 250); do
  ip link show "olmv1h$n" >/dev/null 2>&1 && continue
  [ -e "/sys/fs/cgroup/pids/olmv1-$n" ] || [ -e "/sys/fs/cgroup/olmv1-$n" ] && continue
  iptables -w -t nat -S "OLMV1-NODE-$n" >/dev/null 2>&1 && continue
  iptables -w -S "OLMV1-NODE-$n" >/dev/null 2>&1 && continue
  NODE_INDEX=$n
  break
done
[ -n "$NODE_INDEX" ] || fail apiserver "real node: no free node number (olmv1h1..250 all exist)"
HOST_IF=olmv1h$NODE_INDEX
HOST_IP=198.18.$NODE_INDEX.1
NODE_IP=198.18.$NODE_INDEX.2
POD_CIDR=198.19.$NODE_INDEX.0/24
NODE_CGROUP=olmv1-$NODE_INDEX
NODE_CHAIN=OLMV1-NODE-$NODE_INDEX
PAUSE_IMAGE=127.0.0.1:$REGISTRY_PORT/olmv1/pause:3.10
# Recorded before anything is created, so that down.sh can remove a half-made node.
{
  echo "export OLMV1_NODE=real"
  echo "export OLMV1_NODE_NAME=$NODE_NAME"
  echo "export OLMV1_NODE_INDEX=$NODE_INDEX"
  echo "export OLMV1_NODE_DIR='$NODE_DIR'"
  echo "export OLMV1_NODE_CGROUP=$NODE_CGROUP"
  echo "export OLMV1_NODE_CHAIN=$NODE_CHAIN"
  echo "export OLMV1_NODE_HOST_IF=$HOST_IF"
  echo "export OLMV1_NODE_HOST_IP=$HOST_IP"
  echo "export OLMV1_NODE_IP=$NODE_IP"
  echo "export OLMV1_POD_CIDR=$POD_CIDR"
  echo "export OLMV1_SERVICE_CIDR=$SERVICE_CIDR"
  echo "export OLMV1_CLUSTER_DNS=$NODE_IP"
  # The registry as the node and Pods reach it (plain HTTP); same content as OLMV1_REGISTRY.
  echo "export OLMV1_NODE_REGISTRY='$HOST_IP:$REGISTRY_PORT'"
  echo "export OLMV1_PAUSE_IMAGE='$PAUSE_IMAGE'"
  echo "export OLMV1_COREDNS_BIN='$OLMV1_COREDNS_BIN'"
} >> "$ENV_FILE"

rm -rf "$NODE_DIR"
mkdir -p "$NODE_DIR/pause-image" "$NODE_DIR/sysctl"
echo "$NODE_CGROUP" > "$NODE_DIR/cgroup"
# v1: the cgroup in every hierarchy (cpuset needs cpus/mems before it takes a process);
# v2: one directory, with the controllers the kubelet needs enabled below it.
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  mkdir -p "/sys/fs/cgroup/$NODE_CGROUP/node"
  sed 's/\([a-z_]*\)/+\1/g' /sys/fs/cgroup/cgroup.subtree_control > "/sys/fs/cgroup/$NODE_CGROUP/cgroup.subtree_control"
else
  for h in /sys/fs/cgroup/*/; do
    [ -f "${h}cgroup.procs" ] && [ "$h" != /sys/fs/cgroup/unified/ ] || continue
    mkdir -p "$h$NODE_CGROUP/node"
    if [ -f "${h}cpuset.cpus" ]; then
      for d in "$h$NODE_CGROUP" "$h$NODE_CGROUP/node"; do
        cat "${h}cpuset.cpus" > "$d/cpuset.cpus"
        cat "${h}cpuset.mems" > "$d/cpuset.mems"
      done
    fi
  done
fi

# ------------------------------------------------------------ namespaces and network
cc -std=c11 -static -Os -s -o "$NODE_DIR/pause-image/pause" "$CLUSTER_DIR/pause.c" ||
  fail apiserver "real node: cannot compile pause.c (static glibc: libc6-dev)"
start node-holder "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" --new "$NODE_DIR/pause-image/pause" holder "$NODE_DIR/"
echo "$OLMV1_NODE_HOLDER_PID" > "$NODE_DIR/holder.pid"
holder_ready() { [ "$(readlink "/proc/$OLMV1_NODE_HOLDER_PID/exe")" = "$NODE_DIR/pause-image/pause" ]; }
wait_for node-holder "$OLMV1_NODE_HOLDER_PID" 10 holder_ready
in_node() { nsenter --net="/proc/$OLMV1_NODE_HOLDER_PID/ns/net" --mount="/proc/$OLMV1_NODE_HOLDER_PID/ns/mnt" -- "$@"; }

node_net() {
  ip link add "$HOST_IF" type veth peer name eth0 netns "$OLMV1_NODE_HOLDER_PID" &&
  ip addr add "$HOST_IP/30" dev "$HOST_IF" &&
  ip link set "$HOST_IF" up &&
  echo 1 > "/proc/sys/net/ipv4/conf/$HOST_IF/route_localnet" &&
  ip route add "$POD_CIDR" via "$NODE_IP" dev "$HOST_IF" &&
  iptables -w -t nat -N "$NODE_CHAIN" &&
  iptables -w -t nat -A "$NODE_CHAIN" -d "$HOST_IP/32" -p tcp -m multiport \
    --dports "$APISERVER_PORT,$REGISTRY_PORT" -m comment --comment "olmv1 $STATE_DIR" \
    -j DNAT --to-destination 127.0.0.1 &&
  iptables -w -t nat -I PREROUTING -i "$HOST_IF" -m comment --comment "olmv1 $STATE_DIR" -j "$NODE_CHAIN" &&
  iptables -w -t nat -I OUTPUT -d "$HOST_IP/32" -m comment --comment "olmv1 $STATE_DIR" -j "$NODE_CHAIN" &&
  iptables -w -N "$NODE_CHAIN" &&
  iptables -w -A "$NODE_CHAIN" -m conntrack --ctstate ESTABLISHED,RELATED,DNAT -j RETURN &&
  iptables -w -A "$NODE_CHAIN" -j REJECT &&
  iptables -w -I INPUT -i "$HOST_IF" -m comment --comment "olmv1 $STATE_DIR" -j "$NODE_CHAIN" &&
  in_node sh -euc '
    ip link set lo up
    ip addr add "$1/30" dev eth0
    ip link set eth0 up
    # Service IPs need a route for connections from the node itself (kube-proxy DNATs them
    # after the route lookup); what no rule DNATs is dropped by a veth whose peer stays down
    # (no dummy driver needed), instead of going to the host.
    ip link add svc0 type veth peer name svc1
    ip link set svc0 up
    ip route add "$2" dev svc0
    echo 1 > /proc/sys/net/ipv4/ip_forward
    echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
  ' sh "$NODE_IP" "$SERVICE_CIDR"
}
node_net >> "$LOGS/node-holder.log" 2>&1 || fail node-holder "real node: network setup failed"

# Private tmpfs for the fixed paths containerd and the kubelet use, and a masked view of the
# six kernel-wide sysctls the kubelet would otherwise rewrite for the whole machine
# (vm.overcommit_memory, kernel.panic_on_oops ...): it reads them in this mount namespace only.
node_mounts() {
  in_node sh -euc '
    for d in /run/containerd /var/log/containers; do
      mkdir -p "$d"; mount -t tmpfs -o mode=0755,size=256m tmpfs "$d"
    done
    shift
    while [ $# -gt 0 ]; do
      k=$1 v=$2; shift 2
      [ "$(cat "/proc/sys/$k")" = "$v" ] && continue
      f=$0/$(echo "$k" | tr / .); echo "$v" > "$f"
      mount --bind "$f" "/proc/sys/$k"
    done
  ' "$NODE_DIR/sysctl" _ vm/overcommit_memory 1 vm/panic_on_oom 0 kernel/panic 10 kernel/panic_on_oops 1 \
    kernel/keys/root_maxkeys 1000000 kernel/keys/root_maxbytes 25000000
}
node_mounts >> "$LOGS/node-holder.log" 2>&1 || fail node-holder "real node: mount setup failed"

# ------------------------------------------------------------ config, pause image, daemons
export NODE_DIR NODE_NAME NODE_IP HOST_IP POD_CIDR SERVICE_CIDR NODE_CGROUP APISERVER_PORT REGISTRY_PORT PKI PAUSE_IMAGE
bash "$CLUSTER_DIR/node-config.sh" || fail apiserver "real node: node-config.sh failed"
"$OLMV1_BIN" image push -q "$NODE_DIR/pause-image" "$PAUSE_IMAGE" --entrypoint /pause >/dev/null ||
  fail registry "real node: could not push the pause image"

start containerd "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" containerd --config "$NODE_DIR/containerd.toml" --log-level warn
wait_for containerd "$OLMV1_CONTAINERD_PID" 30 ctr --address "$NODE_DIR/containerd.sock" version

start kubelet "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" "$OLMV1_K8S_BIN/kubelet" \
  --config="$NODE_DIR/kubelet.yaml" --kubeconfig="$NODE_DIR/kubeconfig" \
  --root-dir="$NODE_DIR/kubelet" --cert-dir="$NODE_DIR/kubelet/pki" \
  --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=1
start kube-proxy "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" "$OLMV1_K8S_BIN/kube-proxy" \
  --config="$NODE_DIR/kube-proxy.yaml" --v=1
start coredns "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" "$OLMV1_COREDNS_BIN/coredns" -conf "$NODE_DIR/Corefile"

# The `kubernetes` Service has no endpoints (--endpoint-reconciler-type=none: 127.0.0.1 is not
# a valid endpoint); give it the address where the node reaches the apiserver.
"${KUBECTL:-kubectl}" --kubeconfig="$KC" apply -f - >/dev/null <<EOF || fail apiserver "real node: cannot create the kubernetes EndpointSlice"
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes-olmv1-node
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: olmv1-e2e-cluster}
addressType: IPv4
endpoints:
- addresses: [$HOST_IP]
  conditions: {ready: true}
ports:
- {name: https, port: $APISERVER_PORT, protocol: TCP}
EOF
# kwok's node stays for scale tests, but only Pods that tolerate this taint go there.
"${KUBECTL:-kubectl}" --kubeconfig="$KC" taint node kwok-node-0 kwok.x-k8s.io/node=fake:NoSchedule --overwrite >/dev/null ||
  fail apiserver "real node: cannot taint kwok-node-0"

real_node_ready() {
  [ "$("${KUBECTL:-kubectl}" --kubeconfig="$KC" get node "$NODE_NAME" \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
wait_for kubelet "$OLMV1_KUBELET_PID" 120 real_node_ready
wait_for kube-proxy "$OLMV1_KUBE_PROXY_PID" 60 in_node curl -fsS --max-time 2 http://127.0.0.1:10256/healthz
wait_for coredns "$OLMV1_COREDNS_PID" 60 in_node curl -fsS --max-time 2 http://127.0.0.1:8181/ready
