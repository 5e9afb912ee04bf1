# node.sh: sourced by up.sh after full.sh when OLMV1_NODE=real (needs up.sh's variables and
# functions). Adds OLMV1_REAL_NODES (default 1) real nodes, `real-node-0`, `real-node-1`, ...:
# each with containerd + runc (Debian), kubelet and kube-proxy (iptables) of the control plane's
# Kubernetes build, CNI bridge/host-local/portmap, and CoreDNS on its kubelet's clusterDNS
# address (its own node IP). The kwok node gets a NoSchedule taint, so ordinary Pods (the
# install file's Deployments) land on the real nodes.
#
# Everything of a node lives in its own network + mount namespace (held by a `pause` process)
# and its own cgroup, both numbered N (1-250, the first free ones; node i of the cluster has the
# i-th free number, so N and i differ when other clusters run):
#   root netns  olmv1hN 198.18.N.1/30 --veth-- eth0 198.18.N.2/30  node netns (kubelet, containerd,
#               kube-proxy, CoreDNS; bridge cni0 198.19.N.1/24 with the Pods)
#   - the node and Pods reach the apiserver and the registry (both on 127.0.0.1 of the host)
#     at 198.18.N.1:<port>: a nat chain OLMV1-NODE-N DNATs exactly those two ports to 127.0.0.1
#     (route_localnet on olmv1hN only); `kubernetes.default` has node 0's address as its endpoint;
#   - from the node, the host accepts only those DNAT'ed connections and replies (filter chain
#     OLMV1-NODE-N on INPUT), not e.g. a host service listening on 0.0.0.0;
#   - the host routes 198.19.N.0/24 to the node (so the apiserver reaches Pods, e.g. webhooks);
#     neither namespace forwards anything elsewhere: the host keeps ip_forward as it is (off here)
#     and the node netns has no default route, no masquerade: Pod traffic cannot leave the machine.
#   - the mount namespace keeps containerd's /run/containerd, the netns and volume mounts and
#     /var/log/containers private, so they vanish with the node's processes (even after kill -9).
#   - cgroup /olmv1-N in every hierarchy: the node's processes in olmv1-N/node, the kubelet's
#     Pods in olmv1-N/kubepods; node-down.sh freezes it and kills every PID in it.
# With several nodes (node i has number N_i; node 0 has N_0 = Z), additionally:
#   - every pair of nodes A, B is joined by a veth of its own, directly between the two node
#     namespaces (it never exists in the root netns):
#       node A netns  olmv1pB (no address) --veth-- olmv1pA (no address)  node B netns
#     and A routes  198.18.B.2/32 dev olmv1pB src 198.18.A.2      (B's node IP)
#                   198.19.B.0/24 via 198.18.B.2 dev olmv1pB src 198.18.A.2   (B's Pods)
#     (B likewise towards A). Pods reach Pods on the other node, and a ClusterIP whose endpoint
#     is there (kube-proxy DNATs on the sending node, the reply comes back the same way), without
#     the host forwarding anything and without masquerade; the host's routes are as for one node.
#   - the registry and `kubernetes.default` are addressed by node 0's host address everywhere
#     (OLMV1_NODE_REGISTRY = 198.18.Z.1:<port>, EndpointSlice 198.18.Z.1): node B (B != Z) routes
#     198.18.Z.1/32 via 198.18.B.1 dev eth0, i.e. to the host over its own veth, and its chain
#     OLMV1-NODE-B DNATs the two ports of 198.18.Z.1 to 127.0.0.1 as well. Its containerd pulls
#     198.18.Z.1:<port>/... images from http://198.18.B.1:<port> (certs.d).
#   - each node runs its own CoreDNS on its own node IP (its kubelet's clusterDNS), so no node's
#     DNS depends on another.
# See README.md ("The real node").

SERVICE_CIDR=10.0.0.0/24
OLMV1_BIN=${OLMV1_BIN:-$REPO_ROOT/build/cli/olmv1}
# REAL_NODES: up.sh (OLMV1_REAL_NODES, 1-8)

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

# ------------------------------------------------------------ numbers, addresses, cgroups
# Under up.sh's machine-wide port lock, so two clusters cannot pick the same N.
NODE_INDEXES=()
for n in $(seq 1 250); do
  ip link show "olmv1h$n" >/dev/null 2>&1 && continue
  [ -e "/sys/fs/cgroup/pids/olmv1-$n" ] || [ -e "/sys/fs/cgroup/olmv1-$n" ] && continue
  iptables -w -t nat -S "OLMV1-NODE-$n" >/dev/null 2>&1 && continue
  iptables -w -S "OLMV1-NODE-$n" >/dev/null 2>&1 && continue
  NODE_INDEXES+=("$n")
  [ ${#NODE_INDEXES[@]} -lt "$REAL_NODES" ] || break
done
[ ${#NODE_INDEXES[@]} = "$REAL_NODES" ] ||
  fail apiserver "real node: fewer than $REAL_NODES free node numbers in 1..250 (olmv1hN, cgroup olmv1-N or chain OLMV1-NODE-N exist)"
# Node 0's host address: the registry and the apiserver as every node's Pods address them.
MAIN_HOST_IP=198.18.${NODE_INDEXES[0]}.1
PAUSE_IMAGE=127.0.0.1:$REGISTRY_PORT/olmv1/pause:3.10

# node_select I: the variables of node I of this cluster (NODE_NAME, NODE_DIR, HOST_IP, ...).
# Node 0 keeps the names of the single-node layout (DIR/node, logs/kubelet.log,
# OLMV1_KUBELET_PID); node I > 0 has DIR/node-I, logs/kubelet-I.log, OLMV1_KUBELET_I_PID.
node_select() {
  NODE_I=$1
  NODE_INDEX=${NODE_INDEXES[$1]}
  NODE_NAME=real-node-$1
  if [ "$1" = 0 ]; then NODE_DIR=$STATE_DIR/node SFX=; else NODE_DIR=$STATE_DIR/node-$1 SFX=-$1; fi
  HOST_IF=olmv1h$NODE_INDEX
  HOST_IP=198.18.$NODE_INDEX.1
  NODE_IP=198.18.$NODE_INDEX.2
  POD_CIDR=198.19.$NODE_INDEX.0/24
  NODE_CGROUP=olmv1-$NODE_INDEX
  NODE_CHAIN=OLMV1-NODE-$NODE_INDEX
  HOLDER_PID=$(pid_var node-holder)
}
# pid_var COMPONENT: the PID up.sh's start recorded for COMPONENT of the selected node.
pid_var() { local v="OLMV1_$(echo "$1$SFX" | tr 'a-z-' 'A-Z_')_PID"; echo "${!v:-}"; }
in_node() { nsenter --net="/proc/$HOLDER_PID/ns/net" --mount="/proc/$HOLDER_PID/ns/mnt" -- "$@"; }

# Recorded before anything is created, so that down.sh can remove a half-made node. The
# OLMV1_NODE_* names without a number describe node 0 (the single-node layout).
node_select 0
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
  # The registry as the nodes and Pods reach it (plain HTTP); same content as OLMV1_REGISTRY.
  echo "export OLMV1_NODE_REGISTRY='$MAIN_HOST_IP:$REGISTRY_PORT'"
  echo "export OLMV1_PAUSE_IMAGE='$PAUSE_IMAGE'"
  echo "export OLMV1_COREDNS_BIN='$OLMV1_COREDNS_BIN'"
  echo "export OLMV1_REAL_NODES=$REAL_NODES"
  names=
  for i in "${!NODE_INDEXES[@]}"; do names+="${names:+ }real-node-$i"; done
  echo "export OLMV1_NODE_NAMES='$names'"
  # Every node by its position I (node 0 included); its clusterDNS is its own node IP.
  for i in "${!NODE_INDEXES[@]}"; do
    node_select "$i"
    echo "export OLMV1_NODE_${i}_NAME=$NODE_NAME"
    echo "export OLMV1_NODE_${i}_INDEX=$NODE_INDEX"
    echo "export OLMV1_NODE_${i}_DIR='$NODE_DIR'"
    echo "export OLMV1_NODE_${i}_CGROUP=$NODE_CGROUP"
    echo "export OLMV1_NODE_${i}_CHAIN=$NODE_CHAIN"
    echo "export OLMV1_NODE_${i}_HOST_IF=$HOST_IF"
    echo "export OLMV1_NODE_${i}_HOST_IP=$HOST_IP"
    echo "export OLMV1_NODE_${i}_IP=$NODE_IP"
    echo "export OLMV1_NODE_${i}_POD_CIDR=$POD_CIDR"
  done
} >> "$ENV_FILE"

node_cgroup() {
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
}

# ------------------------------------------------------------ namespaces and network
node_net() {
  # The apiserver and registry ports of this node's host address, and of node 0's (the one
  # OLMV1_NODE_REGISTRY and `kubernetes.default` name) on other nodes.
  local dnat_to=$HOST_IP/32 main_route=
  if [ "$HOST_IP" != "$MAIN_HOST_IP" ]; then dnat_to+=,$MAIN_HOST_IP/32; main_route=$MAIN_HOST_IP; fi
  ip link add "$HOST_IF" type veth peer name eth0 netns "$HOLDER_PID" &&
  ip addr add "$HOST_IP/30" dev "$HOST_IF" &&
  ip link set "$HOST_IF" up &&
  echo 1 > "/proc/sys/net/ipv4/conf/$HOST_IF/route_localnet" &&
  ip route add "$POD_CIDR" via "$NODE_IP" dev "$HOST_IF" &&
  iptables -w -t nat -N "$NODE_CHAIN" &&
  iptables -w -t nat -A "$NODE_CHAIN" -d "$dnat_to" -p tcp -m multiport \
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
    # Not node 0: node 0'\''s host address (registry, apiserver) over this node'\''s own veth.
    [ -z "$4" ] || ip route add "$4/32" via "$3" dev eth0
    echo 1 > /proc/sys/net/ipv4/ip_forward
    echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
  ' sh "$NODE_IP" "$SERVICE_CIDR" "$HOST_IP" "$main_route"
}

# node_pair I J: the veth between the namespaces of nodes I and J, and the routes over it to
# the other's node IP and Pods (see the header).
node_pair() {
  local a b pa pb
  node_select "$2"; b=$NODE_INDEX; pb=$HOLDER_PID
  node_select "$1"; a=$NODE_INDEX; pa=$HOLDER_PID
  nsenter --net="/proc/$pa/ns/net" -- ip link add "olmv1p$b" type veth peer name "olmv1p$a" netns "$pb" || return 1
  for side in "$a $b $pa" "$b $a $pb"; do
    set -- $side
    nsenter --net="/proc/$3/ns/net" -- sh -euc '
      ip link set "olmv1p$2" up
      ip route add "198.18.$2.2/32" dev "olmv1p$2" src "198.18.$1.2"
      ip route add "198.19.$2.0/24" via "198.18.$2.2" dev "olmv1p$2" src "198.18.$1.2"
    ' sh "$1" "$2" || return 1
  done
}

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

holder_ready() { [ "$(readlink "/proc/$HOLDER_PID/exe")" = "$NODE_DIR/pause-image/pause" ]; }

# Every node: cgroup, namespaces (the holder), its veth to the host, mounts, config files.
for i in "${!NODE_INDEXES[@]}"; do
  node_select "$i"
  node_cgroup
  if [ "$i" = 0 ]; then
    cc -std=c11 -static -Os -s -o "$NODE_DIR/pause-image/pause" "$CLUSTER_DIR/pause.c" ||
      fail apiserver "real node: cannot compile pause.c (static glibc: libc6-dev)"
  else
    cp "$STATE_DIR/node/pause-image/pause" "$NODE_DIR/pause-image/pause"
  fi
  start "node-holder$SFX" "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" --new "$NODE_DIR/pause-image/pause" holder "$NODE_DIR/"
  node_select "$i"   # HOLDER_PID, just recorded by start
  echo "$HOLDER_PID" > "$NODE_DIR/holder.pid"
  wait_for "node-holder$SFX" "$HOLDER_PID" 10 holder_ready
  node_net >> "$LOGS/node-holder$SFX.log" 2>&1 || fail "node-holder$SFX" "$NODE_NAME: network setup failed"
  node_mounts >> "$LOGS/node-holder$SFX.log" 2>&1 || fail "node-holder$SFX" "$NODE_NAME: mount setup failed"
  export NODE_DIR NODE_NAME NODE_IP HOST_IP POD_CIDR SERVICE_CIDR NODE_CGROUP APISERVER_PORT REGISTRY_PORT PKI PAUSE_IMAGE
  REGISTRY_HOST_IP=$MAIN_HOST_IP bash "$CLUSTER_DIR/node-config.sh" ||
    fail apiserver "$NODE_NAME: node-config.sh failed"
done
holders=
for i in "${!NODE_INDEXES[@]}"; do node_select "$i"; holders+="${holders:+ }$HOLDER_PID"; done
echo "export OLMV1_NODE_HOLDER_PIDS='$holders'" >> "$ENV_FILE"
for i in "${!NODE_INDEXES[@]}"; do
  for ((j = i + 1; j < ${#NODE_INDEXES[@]}; j++)); do
    node_pair "$i" "$j" >> "$LOGS/node-holder.log" 2>&1 ||
      fail node-holder "real nodes: the link between real-node-$i and real-node-$j failed"
  done
done

# ------------------------------------------------------------ pause image, daemons
"$OLMV1_BIN" image push -q "$STATE_DIR/node/pause-image" "$PAUSE_IMAGE" --entrypoint /pause >/dev/null ||
  fail registry "real node: could not push the pause image"

# A stand-in for docker.io/library/busybox:1.36, the image of upstream's e2e test operators
# (test/internal/catalog/bundle.go: an httpd whose probes read /tmp/www), built from Debian's
# busybox-static (1.35) since no image can be pulled here. The node reads docker.io from this
# registry (node-config.sh). Without busybox-static, those Pods stay in ImagePullBackOff.
if BUSYBOX=$(command -v busybox); then
  BUSYBOX_ROOT="$STATE_DIR/node/busybox-image"
  rm -rf "$BUSYBOX_ROOT" && mkdir -p "$BUSYBOX_ROOT/bin" "$BUSYBOX_ROOT/tmp"
  cp "$BUSYBOX" "$BUSYBOX_ROOT/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$BUSYBOX_ROOT/bin/$applet"
  done
  "$OLMV1_BIN" image push -q "$BUSYBOX_ROOT" "127.0.0.1:$REGISTRY_PORT/library/busybox:1.36" --entrypoint /bin/sh >/dev/null ||
    fail registry "real node: could not push the busybox stand-in image"
fi

for i in "${!NODE_INDEXES[@]}"; do
  node_select "$i"
  start "containerd$SFX" "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" containerd --config "$NODE_DIR/containerd.toml" --log-level warn
done
for i in "${!NODE_INDEXES[@]}"; do
  node_select "$i"
  wait_for "containerd$SFX" "$(pid_var containerd)" 30 ctr --address "$NODE_DIR/containerd.sock" version
  start "kubelet$SFX" "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" "$OLMV1_K8S_BIN/kubelet" \
    --config="$NODE_DIR/kubelet.yaml" --kubeconfig="$NODE_DIR/kubeconfig" \
    --root-dir="$NODE_DIR/kubelet" --cert-dir="$NODE_DIR/kubelet/pki" \
    --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=1
  start "kube-proxy$SFX" "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" "$OLMV1_K8S_BIN/kube-proxy" \
    --config="$NODE_DIR/kube-proxy.yaml" --v=1
  start "coredns$SFX" "$CLUSTER_DIR/node-exec.sh" "$NODE_DIR" "$OLMV1_COREDNS_BIN/coredns" -conf "$NODE_DIR/Corefile"
done

# The `kubernetes` Service has no endpoints (--endpoint-reconciler-type=none: 127.0.0.1 is not
# a valid endpoint); give it the address where the nodes reach the apiserver.
"${KUBECTL:-kubectl}" --kubeconfig="$KC" apply -f - >/dev/null <<EOF || fail apiserver "real node: cannot create the kubernetes EndpointSlice"
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes-olmv1-node
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: olmv1-e2e-cluster}
addressType: IPv4
endpoints:
- addresses: [$MAIN_HOST_IP]
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
for i in "${!NODE_INDEXES[@]}"; do
  node_select "$i"
  wait_for "kubelet$SFX" "$(pid_var kubelet)" 120 real_node_ready
  wait_for "kube-proxy$SFX" "$(pid_var kube-proxy)" 60 in_node curl -fsS --max-time 2 http://127.0.0.1:10256/healthz
  wait_for "coredns$SFX" "$(pid_var coredns)" 60 in_node curl -fsS --max-time 2 http://127.0.0.1:8181/ready
done
