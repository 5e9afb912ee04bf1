#!/usr/bin/env bash
# The daemons load only libraries they use.  Each shared library costs resident memory in
# every process even when never called (mapped, relocated, its constructors run), so the
# build links libcurl (scripts/build-curl.sh) and libarchive (oci/CMakeLists.txt) statically,
# without the dependencies Debian's shared builds of them pull in.  This fails when a change
# brings one of those back, e.g. a target linking pkg-config's libcurl again.
# Usage: daemon_libraries.sh BINARY...
set -euo pipefail
unwanted='libcurl|librtmp|libgnutls|libnettle|libhogweed|libgmp|libgssapi|libkrb5|libk5crypto|libldap|liblber|libsasl2|libssh2|libidn2|libpsl|libbrotli|libarchive|libxml2|libicu|libstdc\+\+|liblzma|libbz2|liblz4|libacl'
status=0
for bin in "$@"; do
  needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$needed" ] || { echo "FAIL: $bin: readelf found no NEEDED entries"; status=1; continue; }
  bad=$(grep -E "^($unwanted)[.-]" <<<"$needed" || true)
  if [ -n "$bad" ]; then
    echo "FAIL: $(basename "$bin") NEEDs $(tr '\n' ' ' <<<"$bad")"
    status=1
  else
    echo "ok: $(basename "$bin") NEEDs $(tr '\n' ' ' <<<"$needed")"
  fi
done
exit $status
