#!/usr/bin/env bash
# make docker-smoke: the image built and smoke-tested (docker/smoke.sh) on a
# machine that may have no Docker at all. Each step is skipped when its result
# is already there:
#   1. installs docker.io and debootstrap with apt when missing, and the
#      host's Chromium and fonts (docker/install-runtime.sh);
#   2. starts dockerd --iptables=false --bridge=none when no engine answers,
#      and stops it again on every way out;
#   3. for each base image of docker/Dockerfile the engine lacks, pulls it, or
#      where no registry answers makes a stand-in of the same name:
#        debian:bookworm-slim  debootstrap --variant=minbase bookworm, with the
#                              slim image's dpkg excludes and apt sources
#        golang:V-bookworm     that plus this machine's Go (which must be V)
#                              and CA bundle
#      so a machine that reaches Docker Hub builds on the real images;
#   4. runs docker/smoke.sh (build, size, runner and server tests).
# Installing and starting the engine need root.
# Usage: scripts/docker-smoke.sh [IMAGE_TAG]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
image=${1:-toolserver:smoke}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
start=$SECONDS
say() { printf 'docker-smoke [%3ds]: %s\n' "$((SECONDS - start))" "$*" >&2; }
die() { say "$*"; exit 1; }

work=$(mktemp -d)
dockerd_pid=""
stop_engine() {
  [ -n "$dockerd_pid" ] || return 0
  if kill -0 "$dockerd_pid" 2>/dev/null; then
    say "stopping the dockerd it started (pid $dockerd_pid)"
    kill -TERM "$dockerd_pid" 2>/dev/null || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$dockerd_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
      sleep 0.2
    done
    if kill -0 "$dockerd_pid" 2>/dev/null; then
      say "dockerd did not stop within 30 s; killing it"
      kill -KILL "$dockerd_pid" 2>/dev/null || true
    fi
  fi
  wait "$dockerd_pid" 2>/dev/null || true
  dockerd_pid=""
  # dockerd leaves its bind mount of the host's network namespace behind.
  if grep -q ' /run/docker/netns/default ' /proc/self/mountinfo; then
    umount /run/docker/netns/default || true
  fi
}
cleanup() {
  stop_engine
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

need_root() {
  [ "$(id -u)" = 0 ] || die "$1 needs root; run it as root, or do it by hand: $2"
}

# 1. Packages.
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  need_root "installing ${missing[*]}" "apt-get install --no-install-recommends ${missing[*]}"
  command -v apt-get >/dev/null 2>&1 || die "no apt-get here: install ${missing[*]} with your package manager"
  say "installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
"$root/docker/install-runtime.sh"

# 2. The engine.
if docker info >/dev/null 2>&1; then
  say "using the Docker engine that answers"
else
  need_root "starting dockerd" "dockerd --iptables=false --bridge=none &"
  say "no Docker engine answers: starting dockerd --iptables=false --bridge=none"
  dockerd --iptables=false --bridge=none >"$work/dockerd.log" 2>&1 &
  dockerd_pid=$!
  deadline=$((SECONDS + 60))
  until docker info >/dev/null 2>&1; do
    if ! kill -0 "$dockerd_pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 20 "$work/dockerd.log" >&2
      die "dockerd did not answer within 60 s (its log's end is above)"
    fi
    sleep 0.2
  done
  say "dockerd answers (pid $dockerd_pid)"
fi

# 3. The base images.
dockerfile=$root/docker/Dockerfile
base=$(sed -n 's/^ARG BASE_IMAGE=//p' "$dockerfile")
goimage=$(sed -n 's/^ARG GO_IMAGE=//p' "$dockerfile")
if [ -z "$base" ] || [ -z "$goimage" ]; then die "$dockerfile names no BASE_IMAGE or GO_IMAGE default"; fi

have_image() { docker image inspect "$1" >/dev/null 2>&1; }
# pulled IMAGE: true when a registry gave it.
pulled() {
  if timeout 120 docker pull -q "$1" >/dev/null 2>"$work/pull.err"; then
    say "pulled $1"
    return 0
  fi
  say "no registry gave $1 ($(head -n 1 "$work/pull.err")); making it here"
  return 1
}

make_debian() {
  local suite=${base#debian:}
  suite=${suite%-slim}
  [ "debian:$suite-slim" = "$base" ] || die "no recipe to make $base here (only debian:SUITE-slim)"
  local dir=$work/rootfs
  say "debootstrap --variant=minbase $suite from $mirror"
  if ! debootstrap --variant=minbase "$suite" "$dir" "$mirror" >"$work/debootstrap.log" 2>&1; then
    tail -n 20 "$work/debootstrap.log" >&2
    die "debootstrap failed (its log's end is above)"
  fi
  # As the real slim image: the suite with its updates and security
  # archives, dpkg excludes, no docs, apt lists, caches or logs, and no
  # resolv.conf or hostname of this machine (the engine provides both).
  rm -f "$dir/etc/apt/sources.list"
  cat >"$dir/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cp "$root/docker/dpkg-nodoc.cfg" "$dir/etc/dpkg/dpkg.cfg.d/docker-slim"
  # apt keeps no downloaded packages, no binary caches of its lists and no
  # translations, as in the real image, so that a build on this stand-in
  # makes the layers it would make on the real one.
  cat >"$dir/etc/apt/apt.conf.d/docker-slim" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
Acquire::GzipIndexes "true";
EOF
  find "$dir/usr/share/doc" -mindepth 1 -not -type d -not -name copyright -delete
  find "$dir/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$dir"/usr/share/{man,info,groff,lintian,locale}/* \
    "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/var/cache/apt/archives/*.deb \
    "$dir"/var/log/*.log "$dir"/var/log/apt/* "$dir"/etc/resolv.conf "$dir"/etc/hostname
  tar -C "$dir" --numeric-owner -c . |
    docker import -c 'CMD ["bash"]' -m "debootstrap --variant=minbase $suite, by scripts/docker-smoke.sh" - "$base" >/dev/null
  rm -rf "$dir"
  say "made $base ($(( $(docker image inspect -f '{{.Size}}' "$base") / 1000000 )) MB)"
}

make_golang() {
  local want=${goimage#golang:}
  want=go${want%%-*}
  local got
  got=$("${GO:-go}" env GOVERSION 2>/dev/null) || die "no Go here to make $goimage from"
  [ "$got" = "$want" ] || die "docker/Dockerfile builds with $goimage; no registry gave it, and this machine's Go is $got: install $want or change GO_IMAGE"
  local goroot ctx=$work/goctx
  goroot=$("${GO:-go}" env GOROOT)
  mkdir -p "$ctx"
  cp -L /etc/ssl/certs/ca-certificates.crt "$ctx/" || die "no CA bundle at /etc/ssl/certs/ca-certificates.crt to give $goimage"
  cat >"$ctx/Dockerfile" <<EOF
FROM $base
COPY go /usr/local/go
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV GOLANG_VERSION=${want#go} GOTOOLCHAIN=local GOPATH=/go \\
    PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go
EOF
  say "making $goimage from $base and $goroot"
  tar -c -C "$ctx" Dockerfile ca-certificates.crt -C "$goroot" --transform 's,^\.,go,S' . |
    docker build -q --network host -t "$goimage" - >/dev/null
  say "made $goimage ($(( $(docker image inspect -f '{{.Size}}' "$goimage") / 1000000 )) MB)"
}

if have_image "$base"; then
  say "$base is there"
elif ! pulled "$base"; then
  make_debian
fi
if have_image "$goimage"; then
  say "$goimage is there"
elif ! pulled "$goimage"; then
  make_golang
fi

# 4. Build and smoke test.
say "docker/smoke.sh $image"
"$root/docker/smoke.sh" "$image"
say "done: image $image is $(( $(docker image inspect -f '{{.Size}}' "$image") / 1000000 )) MB"
