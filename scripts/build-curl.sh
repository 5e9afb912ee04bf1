#!/usr/bin/env bash
# Builds the static libcurl that catalogd, operator-controller and olmv1 link: Debian's own
# curl source package (bookworm, with every Debian security patch), configured for what we
# use and nothing more: HTTP and HTTPS over OpenSSL, HTTP/2 (nghttp2: many apiserver watches
# as streams on one connection), gzip (zlib), proxies, the threaded resolver.
#
# Why not Debian's libcurl4 itself: it NEEDs librtmp (-> gnutls, nettle, gmp, hogweed),
# gssapi/krb5, ldap/sasl, ssh2, idn2, psl, brotli and zstd.  We call none of them, yet each one
# is mapped, relocated and partly resident in every process: 3.8 MiB of an idle
# operator-controller's 13.5 MiB (bench/rss_breakdown.sh).  Debian's libcurl.a does not help:
# its protocol table references every protocol, so the static link needs them all.  The cost of
# this choice: a curl security fix reaches our binaries when they are rebuilt (`make deps`
# picks up the newest Debian source when OLMV1_CURL_REFRESH=1 or the cache is empty), as it
# does anyway for the daemon images, which carry their libraries.
#
# The source comes through apt from deb-src entries kept in a private apt state directory (the
# system's apt configuration is not touched), so the files are checked against Debian's signed
# Sources index.  Output, shared by every checkout on the machine:
#   $CACHE/libcurl/<debian version>/{include,lib/libcurl.a}
#   $CACHE/libcurl/current -> <debian version>     (what CMake links; OLMV1_CURL_DIR overrides)
# with CACHE=${OLMV1_CACHE_DIR:-$HOME/.cache/olmv1}.  Idempotent: with `current` present it does
# nothing and needs no network.  About 40 s on 2 cores.
set -euo pipefail

CACHE=${OLMV1_CACHE_DIR:-$HOME/.cache/olmv1}
root=$CACHE/libcurl
if [ -f "$root/current/lib/libcurl.a" ] && [ "${OLMV1_CURL_REFRESH:-0}" != 1 ]; then
  echo "curl: cached: $(readlink "$root/current")"
  exit 0
fi
mkdir -p "$root"
work=$(mktemp -d "$root/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# apt with only the deb-src lines, its own lists and cache, no lock on the system's.
mkdir -p "$work/apt/parts" "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
for suite in "debian bookworm bookworm-updates" "debian-security bookworm-security"; do
  set -- $suite
  printf 'Types: deb-src\nURIs: http://deb.debian.org/%s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n' \
    "$1" "${*:2}"
done >"$work/apt/parts/olmv1-src.sources"
apt_opts=(-q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/apt/parts"
          -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
          -o Debug::NoLocking=1 -o "APT::Sandbox::User=$(id -un)")
apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only curl >>"$work/apt.log" 2>&1) \
  || { cat "$work/apt.log" >&2; exit 1; }
dsc=$(ls "$work/src"/curl_*.dsc)
version=$(sed -n 's/^Version: //p' "$dsc")
echo "curl: building Debian curl $version (HTTP/HTTPS, OpenSSL, nghttp2, zlib; static)"

# Unpack with Debian's patches, then take back the last two (gnutls, nss): Debian's rules do the
# same for its OpenSSL flavour.
(cd "$work/src" && dpkg-source -q -x "$dsc" tree >/dev/null 2>&1)
tree=$work/src/tree
for p in 99_nss.patch 90_gnutls.patch; do
  if grep -qx "$p" "$tree/debian/patches/series"; then
    patch -s -R -p1 -d "$tree" <"$tree/debian/patches/$p"
  fi
done
# Some patches touch configure.ac and Makefile.am (krb5, ldap, zsh: nothing this build
# enables).  Keep the shipped generated files newer so make never tries to run autotools.
(cd "$tree" && touch aclocal.m4 && touch configure && find . -name Makefile.in -exec touch {} + \
  && touch lib/curl_config.h.in)

prefix=$root/$version
rm -rf "$prefix"
(cd "$tree" && ./configure -q --prefix="$prefix" --disable-shared --enable-static --with-pic \
  --disable-dependency-tracking \
  --with-openssl --with-zlib --with-nghttp2 \
  --with-ca-bundle=/etc/ssl/certs/ca-certificates.crt --with-ca-path=/etc/ssl/certs \
  --without-libpsl --without-libidn2 --without-librtmp --without-libssh2 --without-libssh \
  --without-gssapi --without-libgsasl --without-brotli --without-zstd \
  --without-nghttp3 --without-ngtcp2 --without-hyper \
  --disable-ldap --disable-ldaps --disable-ftp --disable-file --disable-dict --disable-telnet \
  --disable-tftp --disable-pop3 --disable-imap --disable-smtp --disable-gopher --disable-mqtt \
  --disable-rtsp --disable-smb --disable-ntlm-wb --disable-manual --disable-docs \
  >"$work/configure.log" 2>&1) || { tail -40 "$work/configure.log" >&2; exit 1; }
grep -q '^#define USE_NGHTTP2 1' "$tree/lib/curl_config.h" || {
  echo "curl: configure found no nghttp2 (is libnghttp2-dev installed? scripts/install-deps.sh)" >&2; exit 1; }
(cd "$tree" && make -s -j "$(nproc)" -C lib >"$work/make.log" 2>&1 \
  && make -s -C lib install >>"$work/make.log" 2>&1 \
  && make -s -C include install >>"$work/make.log" 2>&1) || { tail -40 "$work/make.log" >&2; exit 1; }
rm -f "$prefix/lib/libcurl.la"
ln -sfn "$version" "$root/current.tmp" && mv -T "$root/current.tmp" "$root/current"
echo "curl: $prefix/lib/libcurl.a"
