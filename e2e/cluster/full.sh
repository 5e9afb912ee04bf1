# full.sh: sourced by up.sh unless OLMV1_CLUSTER_FULL=0 (needs the variables and functions of
# up.sh). Starts kube-controller-manager, kube-scheduler and kwok plus one fake Node, so
# that Pods get scheduled, become Ready, and Deployments become Available, without any
# container runtime. Also brings namespace deletion and garbage collection (KCM).

[ -x "${OLMV1_KWOK_BIN:-}/kwok" ] && [ -s "$OLMV1_KWOK_BIN/stages.yaml" ] || fail apiserver "kwok binary missing (build.sh with OLMV1_CLUSTER_FULL=1)"
pick_port KCM_PORT
pick_port SCHEDULER_PORT
pick_port KWOK_PORT
{
  echo "export OLMV1_KCM_PORT=$KCM_PORT"
  echo "export OLMV1_SCHEDULER_PORT=$SCHEDULER_PORT"
  echo "export OLMV1_KWOK_PORT=$KWOK_PORT"
} >> "$ENV_FILE"
KC=$STATE_DIR/kubeconfig

# The admin kubeconfig is used for everything (like kwokctl); the components are trusted.
# --leader-elect=false: a single instance, no lease round-trips at start.
# --authentication/authorization-kubeconfig: delegated authn/z for their own /healthz etc.
start controller-manager "$OLMV1_K8S_BIN/kube-controller-manager" \
  --kubeconfig="$KC" --authentication-kubeconfig="$KC" --authorization-kubeconfig="$KC" \
  --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
  --cert-dir="$STATE_DIR/apiserver-certs/kcm" \
  --root-ca-file="$PKI/ca.crt" --service-account-private-key-file="$PKI/sa.key" \
  --use-service-account-credentials=false \
  --node-monitor-period=5s --node-monitor-grace-period=40s --v=1

start scheduler "$OLMV1_K8S_BIN/kube-scheduler" \
  --kubeconfig="$KC" --authentication-kubeconfig="$KC" --authorization-kubeconfig="$KC" \
  --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false \
  --cert-dir="$STATE_DIR/apiserver-certs/scheduler" --v=1

# kwok plays the kubelet of every Node annotated kwok.x-k8s.io/node=fake. The IPs are fake
# status data; nothing ever connects to them. --server-address: its own healthz/metrics
# endpoint, on loopback and a picked port (its default would be a fixed port).
# Own config file (so a developer's ~/.kwok/kwok.yaml cannot change test behaviour) holding
# the default stages that build.sh extracted from the kwok module: kwok v0.8.0 has none built in.
mkdir -p "$STATE_DIR/kwok"
# No KwokConfiguration document on purpose: kwok applies its defaults (parallelism etc.) only
# when the config has none; an empty `options: {}` leaves them 0 and kwok refuses to start.
cp "$OLMV1_KWOK_BIN/stages.yaml" "$STATE_DIR/kwok/kwok.yaml"
start kwok "$OLMV1_KWOK_BIN/kwok" --kubeconfig="$KC" --config="$STATE_DIR/kwok/kwok.yaml" \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --cidr=10.244.0.0/16 --node-ip=10.0.0.2 --node-lease-duration-seconds=40 \
  --server-address="127.0.0.1:$KWOK_PORT"

healthz() { curl -fsSk --max-time 5 "https://127.0.0.1:$1/healthz"; }
wait_for controller-manager "$OLMV1_CONTROLLER_MANAGER_PID" 120 healthz "$KCM_PORT"
wait_for scheduler "$OLMV1_SCHEDULER_PID" 120 healthz "$SCHEDULER_PORT"
wait_for kwok "$OLMV1_KWOK_PID" 60 curl -fsS --max-time 5 "http://127.0.0.1:$KWOK_PORT/healthz"

# One fake node, without taints: bundle Deployments carry no kwok toleration.
"${KUBECTL:-kubectl}" --kubeconfig="$KC" apply -f - >/dev/null <<'EOF' || fail apiserver "could not create the kwok node"
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations: {node.alpha.kubernetes.io/ttl: "0", kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux, kubernetes.io/hostname: kwok-node-0, type: kwok}
EOF
node_ready() {
  [ "$("${KUBECTL:-kubectl}" --kubeconfig="$KC" get node kwok-node-0 \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
wait_for kwok-node "$OLMV1_KWOK_PID" 60 node_ready
