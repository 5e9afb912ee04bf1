#!/usr/bin/env bash
# rootfs.sh BINARY ROOT: lays out the root filesystem of a daemon image in ROOT:
#
#   /usr/local/bin/<name>          the daemon, stripped of debug sections
#   /<name>                        a symlink to it: upstream's install manifests run the
#                                  daemons as "./catalogd" (from the working directory, /) and
#                                  "/operator-controller", so our images drop into them
#   /lib*/.../*.so*                exactly the shared libraries it loads (ldd), copied from
#                                  the Debian packages it was built against
#   /etc/ssl/certs/ca-certificates.crt
#   /etc/passwd, /etc/group        root and the numeric non-root user 65532 ("nonroot")
#   /etc/nsswitch.conf             files, then DNS
#   /usr/share/doc/<pkg>/copyright the license of every package a file came from
#   /tmp                           empty (mount an emptyDir there with readOnlyRootFilesystem)
#
# Every library must come from a package listed in images/runtime-packages.txt (the list
# the Containerfile installs); anything else is an error naming the library and package.
# The result depends only on the binary and the installed packages: `olmv1 image push`
# writes it with fixed owners, modes, mtimes and order, so the same inputs give the same
# digest.
set -euo pipefail

die() { echo "rootfs.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: rootfs.sh BINARY ROOT"
bin=$1
root=$2
here=$(cd "$(dirname "$0")" && pwd)
list=${OLMV1_RUNTIME_PACKAGES:-$here/runtime-packages.txt} # a test may narrow it
[ -x "$bin" ] || die "$bin is not an executable (run make build first)"
name=$(basename "$bin")

# The package a file belongs to; Debian's usrmerge means dpkg may know the /lib or the
# /usr/lib spelling of the same path.
package_of() {
  local p=$1 out
  for cand in "$p" "$(readlink -f "$p")" "/usr$p" "${p#/usr}"; do
    if out=$(dpkg-query -S "$cand" 2>/dev/null); then
      echo "${out%%:*}" | sed 's/:.*//'
      return 0
    fi
  done
  return 1
}

allowed() { grep -v '^#' "$list" | grep -qx "$1"; }

rm -rf "$root"
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/usr/share/doc"
strip --strip-debug -o "$root/usr/local/bin/$name" "$bin"
chmod 0755 "$root/usr/local/bin/$name"
ln -s "usr/local/bin/$name" "$root/$name"

packages=(ca-certificates)
# ldd prints "libx.so.1 => /path (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)" for the
# interpreter and "linux-vdso.so.1 (0x...)" for the kernel's, which has no file.
while read -r line; do
  case $line in
    *"not found"*) die "$name: $line" ;;
    *"=> /"*) path=${line#*=> }; path=${path%% (*} ;;
    /*) path=${line%% (*} ;;
    *) continue ;;
  esac
  pkg=$(package_of "$path") || die "$path (loaded by $name) belongs to no Debian package"
  allowed "$pkg" || die "$path (loaded by $name) comes from $pkg, which images/runtime-packages.txt does not list"
  mkdir -p "$root$(dirname "$path")"
  cp -L --preserve=mode "$path" "$root$path" # the interpreter must stay executable
  packages+=("$pkg")
done < <(ldd "$bin")

[ -f /etc/ssl/certs/ca-certificates.crt ] || die "/etc/ssl/certs/ca-certificates.crt is missing (install ca-certificates)"
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

for pkg in $(printf '%s\n' "${packages[@]}" | sort -u); do
  if [ -f "/usr/share/doc/$pkg/copyright" ]; then
    mkdir -p "$root/usr/share/doc/$pkg"
    cp -L "/usr/share/doc/$pkg/copyright" "$root/usr/share/doc/$pkg/copyright"
  fi
done

cat > "$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
cat > "$root/etc/group" <<'EOF'
root:x:0:
nonroot:x:65532:
EOF
echo "hosts: files dns" > "$root/etc/nsswitch.conf"
