#!/usr/bin/env bash
# Smoke test of the image, where a Docker engine runs (`make docker-smoke`
# first makes one run, from a machine without Docker):
#   1. builds the image with this machine's Chromium version, prints its size,
#      and checks that the image renders with the same Chromium and fonts as
#      this machine;
#   2. runs the example flows as a mounted-project runner, read-only root and
#      a non-root user (compare, then an update that writes baselines owned by
#      that user, which must then pass on this machine);
#   3. starts it as a remote tool-server (read-only root, the image's own
#      non-root user) and runs flows against it over --link from this
#      machine, checking the exit codes and the baselines written back into
#      the local project.
# Every container runs with --read-only --tmpfs /tmp. The engine needs no
# bridge: the build and the server use the host's network, the runner none.
# Usage: docker/smoke.sh [IMAGE_TAG]
set -euo pipefail
if ! docker info >/dev/null 2>&1; then
  echo "docker/smoke.sh: no Docker engine here (docker info failed); run make docker-smoke, which starts one" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
image=${1:-toolserver:smoke}
work=$(mktemp -d)
cid=""
site=""
cleanup() {
  if [ -n "$cid" ]; then docker rm -f "$cid" >/dev/null 2>&1 || true; fi
  if [ -n "$site" ]; then kill "$site" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }
section() { echo "== $* [${SECONDS}s]"; }

# What decides the pixels: the image must have this machine's versions.
render_packages=(chromium-headless-shell chromium-common fonts-liberation fonts-dejavu-core fonts-noto-color-emoji)
versions() { dpkg-query -W -f='${Package}=${Version}\n' "${render_packages[@]}"; }
host_versions=$(versions) || fail "this machine lacks Chromium or the fonts: run docker/install-runtime.sh"
chromium_version=$(dpkg-query -W -f='${Version}' chromium-headless-shell)

section build
docker build --network host -f "$root/docker/Dockerfile" \
  --build-arg CHROMIUM_VERSION="$chromium_version" \
  --build-arg VERSION="$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo dev)" \
  --build-arg COMMIT="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  -t "$image" "$root"
size=$(docker image inspect -f '{{.Size}}' "$image")
echo "image $image: $((size / 1000000)) MB ($size bytes)"
ro=(--rm --read-only --tmpfs /tmp)
image_versions=$(docker run "${ro[@]}" --network none --entrypoint dpkg-query "$image" \
  -W -f='${Package}=${Version}\n' "${render_packages[@]}")
if [ "$image_versions" != "$host_versions" ]; then
  diff <(echo "$host_versions") <(echo "$image_versions") >&2 || true
  fail "the image renders with other packages than this machine (< host, > image)"
fi
echo "renders with: $(echo "$image_versions" | tr '\n' ' ')"
[ "$(docker run "${ro[@]}" --network none --entrypoint id "$image" -u)" != 0 ] || fail "the image's default user is root"

(cd "$root" && make build >/dev/null)
bin=$root/bin/toolserver

section mounted-project runner
cp -r "$root/examples/shop" "$work/shop"
# The runner runs as the invoking user so that what it writes is theirs; when
# that is root, as a stand-in unprivileged user that owns the copy.
uid=$(id -u)
gid=$(id -g)
if [ "$uid" = 0 ]; then
  uid=20001
  gid=20001
  chown -R "$uid:$gid" "$work/shop"
fi
run_mounted() {
  docker run "${ro[@]}" --network none --user "$uid:$gid" -v "$work/shop":/project "$image" "$@"
}
run_mounted flow run .argent/flows -r --artifacts /project/flow-artifacts || fail "the example flows did not pass in the image (exit $?)"
rm -rf "$work/shop/.argent/flows/__baselines__"
set +e
run_mounted flow run .argent/flows -r
code=$?
set -e
[ "$code" = 1 ] || fail "a run without baselines should exit 1, got $code"
run_mounted flow run .argent/flows -r --update-baselines || fail "--update-baselines failed"
for f in basket__chromium-1280x800.png paid__chromium-1280x800.png; do
  p=$work/shop/.argent/flows/__baselines__/checkout/$f
  [ -f "$p" ] || fail "baseline $f not written"
  [ "$(stat -c %u:%g "$p")" = "$uid:$gid" ] || fail "baseline $f is owned by $(stat -c %u:%g "$p"), not by the runner's user $uid:$gid"
done
# Baselines made in the image pass on the host and the other way round.
"$bin" flow run "$work/shop/.argent/flows" -r || fail "baselines made in the image do not pass on the host"

section remote tool-server over --link
port=$((20000 + RANDOM % 20000))
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
cid=$(docker run -d --read-only --tmpfs /tmp --network host -e ARGENT_AUTH_TOKEN="$token" "$image" serve --addr "127.0.0.1:$port")
for _ in $(seq 1 100); do
  ARGENT_AUTH_TOKEN=$token "$bin" healthcheck --addr "127.0.0.1:$port" >/dev/null 2>&1 && break
  [ "$(docker inspect -f '{{.State.Running}}' "$cid")" = true ] || break
  sleep 0.2
done
ARGENT_AUTH_TOKEN=$token "$bin" healthcheck --addr "127.0.0.1:$port" >/dev/null || {
  docker logs "$cid" >&2 || true
  fail "the server in the container did not become healthy"
}
server_uid=$(docker exec "$cid" id -u)
[ "$server_uid" != 0 ] || fail "the server runs as root"
sport=$((port + 1))
(cd "$work/shop/site" && exec python3 -m http.server "$sport" --bind 127.0.0.1 >/dev/null 2>&1) &
site=$!
mkdir -p "$work/remote/.argent/flows"
cp "$work/shop/.argent/flows/fill-email.yaml" "$work/remote/.argent/flows/"
cat > "$work/remote/.argent/flows/remote.yaml" <<YAML
steps:
  - launch: http://127.0.0.1:$sport/index.html
  - await: { visible: { text: Your basket } }
  - run: fill-email
  - snapshot: basket
YAML
export ARGENT_AUTH_TOKEN=$token
set +e
"$bin" flow run remote --project "$work/remote" --link "http://127.0.0.1:$port"
code=$?
set -e
[ "$code" = 1 ] || fail "a linked run without a baseline should exit 1, got $code"
"$bin" flow run remote --project "$work/remote" --link "http://127.0.0.1:$port" --update-baselines || fail "linked --update-baselines failed"
[ -f "$work/remote/.argent/flows/__baselines__/remote/basket__chromium-1280x800.png" ] || fail "the linked run did not write the baseline into the local project"
"$bin" flow run remote --project "$work/remote" --link "http://127.0.0.1:$port" || fail "the linked compare did not pass"

section the run store in its volume
# Read the whole list before grep looks at it: under pipefail, a grep -q
# that stops at its match would fail the pipe with the writer's SIGPIPE.
listed=$("$bin" runs list --link "http://127.0.0.1:$port" --outcome passed) || fail "runs list against the container failed"
grep -q remote <<<"$listed" || fail "the container's run store does not list the passing run: $listed"
docker exec "$cid" test -s /var/lib/toolserver/runs.db || fail "no run store in /var/lib/toolserver"
echo "smoke: PASS in ${SECONDS}s (image $image, $((size / 1000000)) MB, server uid $server_uid, runner uid $uid, read-only root)"
