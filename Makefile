# OLM v1 in C.  `make run` starts the product locally; `make deps test` passes every test.
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_RELEASE ?= build-release
JOBS       ?= $(shell nproc)

.PHONY: all deps build build-asan test unit-test unit-test-asan unit-test-release build-types e2e upstream-e2e bench bench-compare clean cluster-up cluster-down run up down \
        images manifests certs deploy undeploy fuzz fuzz-smoke

all: build

deps:
	bash scripts/install-deps.sh
	bash scripts/build-curl.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

$(BUILD_ASAN)/CMakeCache.txt:
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DOLMV1_SANITIZE=ON

# libFuzzer wants clang; its own build dir, where every library is instrumented (fuzz/README.md).
$(BUILD_FUZZ)/CMakeCache.txt:
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOLMV1_FUZZ=ON

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

build-asan: $(BUILD_ASAN)/CMakeCache.txt
	cmake --build $(BUILD_ASAN) -j $(JOBS)

unit-test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Runs the product locally: control plane + registry + CRDs + catalogd + a demo catalog.
run: deps build
	bash scripts/run-local.sh

# The same without the demo catalog.
up: build
	bash scripts/run-local.sh --no-demo

# Stops everything `run`/`up` started, by PID.
down:
	bash scripts/down-local.sh

# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer.
unit-test-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# Packagers build Release (-O3 finds format-truncation warnings that -O2 does not): the unit
# tests in that build too.
$(BUILD_RELEASE)/CMakeCache.txt:
	cmake -S . -B $(BUILD_RELEASE) -DCMAKE_BUILD_TYPE=Release

unit-test-release: $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS)
	cd $(BUILD_RELEASE) && ctest --output-on-failure -j $(JOBS)

# Every other build type, and clang: each builds (warnings are errors) and passes the unit
# tests.  Not part of `make test` (about 10 minutes on 2 cores); run it before changing
# compiler flags or warnings.
build-types:
	set -e; for t in Debug MinSizeRel; do \
	  cmake -S . -B build-$$t -DCMAKE_BUILD_TYPE=$$t && cmake --build build-$$t -j $(JOBS) && \
	  (cd build-$$t && ctest --output-on-failure -j $(JOBS)); done
	CC=clang cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-clang -j $(JOBS) && cd build-clang && ctest --output-on-failure -j $(JOBS)

# The libFuzzer targets (fuzz/), and a bounded run of each from its seed corpus
# (FUZZ_SECONDS per target, default 15; two at a time).
fuzz: $(BUILD_FUZZ)/CMakeCache.txt
	cmake --build $(BUILD_FUZZ) --target fuzzers -j $(JOBS)

fuzz-smoke: fuzz
	bash fuzz/smoke.sh $(BUILD_FUZZ)

# End-to-end tests against a real etcd + kube-apiserver + registry (e2e/).
e2e: build
	@if [ -x e2e/run-tests.sh ]; then e2e/run-tests.sh; else echo "e2e: no end-to-end suite yet"; fi

test: unit-test unit-test-release unit-test-asan fuzz-smoke e2e

bench: build
	bash bench/run.sh

# Upstream OLM v1's own e2e suite (../shared/upstream-e2e, godog, unmodified) against the
# project as Pods on a real node (root; about 12 minutes, plus a first build of the suite's
# binary), operator-controller in upstream mode (deploy.sh OLMV1_UPSTREAM_MODE=1: upstream's
# rights, spec.serviceAccount ignored and warned about, as upstream).
# Summary: $${OLMV1_UPSTREAM_E2E_DIR:-~/.cache/olmv1/upstream-e2e}/runs/*/summary.md
UPSTREAM_E2E ?= ../shared/upstream-e2e/run.sh
upstream-e2e: build
	@if [ ! -f $(UPSTREAM_E2E) ]; then echo "upstream-e2e: $(UPSTREAM_E2E) not found: nothing to run"; \
	else OLMV1_UPSTREAM_MODE=1 bash $(UPSTREAM_E2E) --no-build $(UPSTREAM_E2E_ARGS); fi

# Side by side with upstream's Go binaries (../shared/upstream, a yardstick kept outside the
# repo): about 25 minutes on 2 cores; figures in $${WORK:-/tmp/sbs-run}/summary.md.  Then
# apply -> Serving again, timed by a watch instead of run.sh's 0.1 s polls
# (bench/apply_serving_compare.sh, 5 trials each, about 2 minutes).
# Without that directory there is nothing to compare against, and it says so.
UPSTREAM_BENCH ?= ../shared/upstream/bench/run.sh
bench-compare: build
	@if [ ! -f $(UPSTREAM_BENCH) ]; then \
	  echo "bench-compare: $(UPSTREAM_BENCH) not found (upstream's Go binaries and their side-by-side bench live outside the repo): nothing to compare"; \
	else \
	  bash bench/compare_deps.sh && bash $(UPSTREAM_BENCH) $(ROUNDS) && \
	  WORK=$${WORK:-/tmp/sbs-run}/serving bash bench/apply_serving_compare.sh; \
	fi

# A real local control plane (etcd + kube-apiserver built from their Go modules) and an
# OCI registry on 127.0.0.1; state, kubeconfig and env file under .dev/.
# OLMV1_NODE=real adds a real node (kubelet, containerd, kube-proxy, CoreDNS; root only), which
# needs the olmv1 CLI to push its pause image.
cluster-up:
	$(if $(filter real,$(OLMV1_NODE)),$(MAKE) build &&) bash e2e/cluster/up.sh

cluster-down:
	bash e2e/cluster/down.sh

# Daemon images without a container engine, pushed to $IMAGE_REGISTRY (default: the local
# cluster's registry); refs with digests go to dist/images.env.
images: build
	bash scripts/images.sh

# dist/olmv1-install.yaml with the image digests of the last `make images`.
manifests:
	bash scripts/manifests.sh

# TLS Secrets for clusters with neither cert-manager nor OpenShift's service-ca.
certs:
	bash scripts/certs.sh

# images + manifests + apply + certs + wait for both Deployments (KUBECONFIG, else the local cluster).
deploy: build
	bash scripts/deploy.sh

undeploy:
	bash scripts/deploy.sh --undeploy

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_RELEASE) build-Debug build-MinSizeRel build-clang
