#!/usr/bin/env bash
# The SIGKILL test with a bigger count than CI's 200: scripts/crash-test.sh [KILLS] (default 2000).
set -euo pipefail
cd "$(dirname "$0")/.."
CRASH_KILLS="${1:-2000}" swift test --filter CrashTests 2>&1 | grep -E "crash test|✘|passed|failed"
