#!/usr/bin/env bash
# Smoke test of the image, where a Docker engine runs:
#   1. builds the image and prints its size,
#   2. runs the example flows as a mounted-project runner (compare, then an
#      update that writes baselines owned by the invoking user),
#   3. starts it as a remote tool-server and runs flows against it over
#      --link from this machine, checking the exit codes and the baselines
#      written back into the local project.
# Usage: docker/smoke.sh [IMAGE_TAG]
set -euo pipefail
if ! docker info >/dev/null 2>&1; then
  echo "docker/smoke.sh: no Docker engine here (docker info failed); run it on a machine with Docker" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
image=${1:-toolserver:smoke}
work=$(mktemp -d)
cid=""
site=""
cleanup() {
  [ -n "$cid" ] && docker rm -f "$cid" >/dev/null 2>&1 || true
  [ -n "$site" ] && kill "$site" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }

echo "== build"
docker build -f "$root/docker/Dockerfile" -t "$image" "$root"
size=$(docker image inspect -f '{{.Size}}' "$image")
echo "image $image: $((size / 1024 / 1024)) MiB"
(cd "$root" && make build >/dev/null)
bin=$root/bin/toolserver

echo "== mounted-project runner"
cp -r "$root/examples/shop" "$work/shop"
run_mounted() {
  docker run --rm --user "$(id -u):$(id -g)" -v "$work/shop":/project "$image" "$@"
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
  [ "$(stat -c %u "$p")" = "$(id -u)" ] || fail "baseline $f is not owned by the invoking user"
done
# Baselines made in the image pass on the host and the other way round.
"$bin" flow run "$work/shop/.argent/flows" -r || fail "baselines made in the image do not pass on the host"

echo "== remote tool-server over --link"
port=$((20000 + RANDOM % 20000))
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
cid=$(docker run -d --network host -e ARGENT_AUTH_TOKEN="$token" "$image" serve --addr "127.0.0.1:$port")
for _ in $(seq 1 100); do
  ARGENT_AUTH_TOKEN=$token "$bin" healthcheck --addr "127.0.0.1:$port" >/dev/null 2>&1 && break
  sleep 0.2
done
ARGENT_AUTH_TOKEN=$token "$bin" healthcheck --addr "127.0.0.1:$port" >/dev/null || fail "the server in the container did not become healthy"
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
echo "smoke: PASS"
