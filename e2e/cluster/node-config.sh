#!/usr/bin/env bash
# node-config.sh: write the configuration of the real node (one job: config files), from the
# variables node.sh exports: NODE_DIR NODE_NAME NODE_IP HOST_IP POD_CIDR SERVICE_CIDR
# NODE_CGROUP APISERVER_PORT REGISTRY_PORT PKI PAUSE_IMAGE, and REGISTRY_HOST_IP (optional,
# default HOST_IP: node 0's host address, by which Pods of every node name the registry).
#
#   NODE_DIR/kubeconfig          admin credentials, server = HOST_IP:APISERVER_PORT (DNAT'ed to
#                                the apiserver on 127.0.0.1), TLS name `kubernetes` (in its cert)
#   NODE_DIR/containerd.toml     containerd: state, root and socket under NODE_DIR, our pause image,
#                                registries from NODE_DIR/certs.d, CNI from NODE_DIR/cni
#   NODE_DIR/certs.d/*/hosts.toml  127.0.0.1:REGISTRY_PORT, HOST_IP:REGISTRY_PORT and
#                                REGISTRY_HOST_IP:REGISTRY_PORT -> plain HTTP on HOST_IP (127.0.0.1
#                                inside the node is the node's own loopback)
#   NODE_DIR/certs.d/docker.io/hosts.toml  docker.io -> the same registry (an offline mirror)
#   NODE_DIR/cni/net.d/10-olmv1.conflist  bridge + host-local (POD_CIDR) + portmap, no masquerade
#   NODE_DIR/kubelet.yaml, kube-proxy.yaml, Corefile
set -euo pipefail
: "${NODE_DIR:?}" "${NODE_NAME:?}" "${NODE_IP:?}" "${HOST_IP:?}" "${POD_CIDR:?}" "${SERVICE_CIDR:?}"
: "${NODE_CGROUP:?}" "${APISERVER_PORT:?}" "${REGISTRY_PORT:?}" "${PKI:?}" "${PAUSE_IMAGE:?}"
REGISTRY_HOST_IP=${REGISTRY_HOST_IP:-$HOST_IP}
REGISTRY_NAMES=("127.0.0.1:$REGISTRY_PORT" "$HOST_IP:$REGISTRY_PORT")
[ "$REGISTRY_HOST_IP" = "$HOST_IP" ] || REGISTRY_NAMES+=("$REGISTRY_HOST_IP:$REGISTRY_PORT")

mkdir -p "$NODE_DIR/cni/net.d" "$NODE_DIR/cni/ipam"

b64() { base64 -w0 < "$1"; }
cat > "$NODE_DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: olmv1
  cluster:
    server: https://$HOST_IP:$APISERVER_PORT
    tls-server-name: kubernetes
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: olmv1-admin
  user:
    client-certificate-data: $(b64 "$PKI/admin.crt")
    client-key-data: $(b64 "$PKI/admin.key")
contexts:
- name: olmv1
  context: {cluster: olmv1, user: olmv1-admin}
current-context: olmv1
EOF
chmod 600 "$NODE_DIR/kubeconfig"

# Every name of the registry leads to the host side of this node's veth, where node.sh DNATs the
# registry port to 127.0.0.1. Images keep the names they were pushed with (127.0.0.1:PORT/...).
for h in "${REGISTRY_NAMES[@]}"; do
  mkdir -p "$NODE_DIR/certs.d/$h"
  cat > "$NODE_DIR/certs.d/$h/hosts.toml" <<EOF
server = "http://$HOST_IP:$REGISTRY_PORT"
[host."http://$HOST_IP:$REGISTRY_PORT"]
  capabilities = ["pull", "resolve"]
EOF
done

# docker.io is mirrored by the local registry: nothing leaves this machine, and upstream's e2e
# test operators (busybox:1.36, i.e. docker.io/library/busybox:1.36) run from the stand-in node.sh
# pushes there. Any other docker.io image is simply not found, as it would be offline anyway.
mkdir -p "$NODE_DIR/certs.d/docker.io"
cat > "$NODE_DIR/certs.d/docker.io/hosts.toml" <<EOF
server = "http://$HOST_IP:$REGISTRY_PORT"
[host."http://$HOST_IP:$REGISTRY_PORT"]
  capabilities = ["pull", "resolve"]
EOF

# containerd 1.6 (config version 2). /run/containerd (shim sockets, runc state) is a tmpfs of
# the node's own mount namespace; everything else lives under NODE_DIR.
cat > "$NODE_DIR/containerd.toml" <<EOF
version = 2
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$NODE_DIR/containerd.sock"
[ttrpc]
  address = "$NODE_DIR/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Never below containerd's own OOM score: the kubelet asks -998 for sandboxes, and lowering
  # oom_score_adj needs CAP_SYS_RESOURCE, which this VM's root lacks (runc fails with
  # "failed to update /proc/self/oom_score_adj: Permission denied").
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  max_concurrent_downloads = 3
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$NODE_DIR/certs.d"
EOF

# No ipMasq: Pod traffic is never rewritten to leave anywhere; the node has no default route.
# The default route inside Pods points at the bridge so that Service IPs reach kube-proxy's rules.
cat > "$NODE_DIR/cni/net.d/10-olmv1.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "olmv1",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$NODE_DIR/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

# failCgroupV1: false: this host has cgroup v1 (kubelet >= 1.35 refuses it by default).
# cgroupRoot: everything the kubelet creates lives under our own cgroup, which down.sh empties.
# resolvConf "": Pods get only cluster DNS (no host resolver: nothing to forward outside).
# Eviction and image GC thresholds are out of the way: a developer's disk may be fuller than 85 %.
cat > "$NODE_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$NODE_CGROUP
containerRuntimeEndpoint: unix://$NODE_DIR/containerd.sock
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: ""
podLogsDir: $NODE_DIR/pod-logs
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization:
  mode: Webhook
failSwapOn: false
serializeImagePulls: false
evictionHard: {memory.available: 100Mi, nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
nodeStatusUpdateFrequency: 5s
syncFrequency: 10s
fileCheckFrequency: 0s
staticPodPath: ""
EOF

# conntrack: 0 = leave the (machine-wide) netfilter settings alone.
cat > "$NODE_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: $NODE_DIR/kubeconfig
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [$NODE_IP/32]
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF

# Cluster DNS on the node's address (the kubelet's clusterDNS), for the cluster's zones only:
# other names are REFUSED at once (there is nothing to forward to: no traffic leaves the machine).
cat > "$NODE_DIR/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $NODE_IP
    errors
    health 127.0.0.1:8080
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $NODE_DIR/kubeconfig olmv1
        pods insecure
        ttl 5
    }
    cache 5
}
EOF
