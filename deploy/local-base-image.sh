#!/usr/bin/env bash
# Builds a Java 17 base image from this machine's Debian packages, for hosts that reach no container registry (the
# test machines): the Containerfile's default base (eclipse-temurin) needs a registry; this one is the same kind of
# image (a JRE 17 on glibc with /bin/sh), made by `podman import` of a root file system assembled here.
#
#   deploy/local-base-image.sh [IMAGE]     (default IMAGE: localhost/vigilo-base:17)
#
# What goes in: the files of the Debian packages openjdk-17-jre-headless, libc6, libgcc-s1, libstdc++6 and zlib1g as
# installed on this host (`dpkg -L`), every shared library their ELF files and the JRE's need (ldd), busybox-static
# for a shell and the usual commands, the JRE's CA certificates, and an /etc/passwd with root only. Needs root (or
# rootless podman), podman, dpkg, busybox; nothing is downloaded.
set -euo pipefail
image="${1:-localhost/vigilo-base:17}"
jre_package=openjdk-17-jre-headless
for c in podman dpkg ldd busybox tar; do
  command -v "$c" >/dev/null || { echo "local-base-image: $c is needed (apt-get install podman busybox-static)" >&2; exit 2; }
done
dpkg -s "$jre_package" >/dev/null 2>&1 || { echo "local-base-image: $jre_package is not installed (apt-get install $jre_package)" >&2; exit 2; }
java_bin="$(dpkg -L "$jre_package" | awk '/^\/usr\/lib\/jvm\/[^\/]+\/bin\/java$/ && !found {print; found = 1}')"
java_home="$(dirname "$(dirname "$(readlink -f "$java_bin")")")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/usr/bin "$root"/usr/lib "$root"/usr/lib64 "$root"/usr/sbin "$root"/etc "$root"/tmp "$root"/home "$root"/root
chmod 1777 "$root/tmp"
# A merged /usr, as Debian 12 and current base images have it.
for d in bin lib lib64 sbin; do ln -s "usr/$d" "$root/$d"; done

# copy PATH: one file or symlink, under its real directory (the host's /lib is a link to /usr/lib).
copy() {
  local p="$1" dir
  dir="$(readlink -f "$(dirname "$p")")"
  [ -e "$p" ] || [ -L "$p" ] || return 0
  [ -d "$p" ] && [ ! -L "$p" ] && return 0
  [ -e "$root$dir/$(basename "$p")" ] && return 0
  mkdir -p "$root$dir"
  cp -a "$p" "$root$dir/"
}
for pkg in "$jre_package" libc6 libgcc-s1 libstdc++6 zlib1g; do
  while read -r p; do copy "$p"; done < <(dpkg -L "$pkg" | grep -v -E '^/usr/share/(doc|man|lintian|locale|bug)/')
done
# The JRE's configuration and CA certificates are symlinks into /etc: keep the files themselves.
cp -aL /etc/ssl/certs/java/cacerts "$work/cacerts" 2>/dev/null && { mkdir -p "$root/etc/ssl/certs/java"; cp "$work/cacerts" "$root/etc/ssl/certs/java/cacerts"; }
# Every shared library an ELF file of the image needs, from the host (resolved, as above).
for _ in 1 2; do
  find "$root" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
    { xargs -0 -r ldd 2>/dev/null || true; } | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | sort -u |
    { grep -v "^$root/" || true; } | while read -r lib; do copy "$lib"; copy "$(readlink -f "$lib")"; done
done
cp "$(readlink -f "$(command -v busybox)")" "$root/usr/bin/busybox"
for applet in $("$root/usr/bin/busybox" --list); do
  [ -e "$root/usr/bin/$applet" ] || ln -s busybox "$root/usr/bin/$applet"
done
ln -sf "$java_home/bin/java" "$root/usr/bin/java"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"

tar -C "$root" -cf "$work/root.tar" .
podman import --quiet \
  --change "ENV JAVA_HOME=$java_home" \
  --change "ENV PATH=$java_home/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin" \
  --change 'CMD ["/bin/sh"]' \
  "$work/root.tar" "$image" >/dev/null
echo "$image"
