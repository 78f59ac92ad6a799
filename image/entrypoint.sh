#!/bin/sh
# llmload container entrypoint: one image, three roles, everything else from the environment.
#
#   LLMLOAD_ROLE=master      locust -f $LOCUST_LOCUSTFILE --master --headless [args]
#   LLMLOAD_ROLE=worker      locust -f $LOCUST_LOCUSTFILE --worker [args]
#   LLMLOAD_ROLE=standalone  locust -f $LOCUST_LOCUSTFILE --headless [args]   (the default)
#
# Locust reads its options from LOCUST_* (LOCUST_HOST, LOCUST_USERS, LOCUST_SPAWN_RATE,
# LOCUST_RUN_TIME, LOCUST_EXPECT_WORKERS, LOCUST_EXPECT_WORKERS_MAX_WAIT, LOCUST_MASTER_NODE_HOST,
# LOCUST_PROCESSES, ...), llmload from LLMLOAD_* (LLMLOAD_MAX_TOKENS, LLMLOAD_RESULTS_DIR,
# LLMLOAD_RUN_ID, ...), the API key from OPENAI_API_KEY. Extra arguments are passed to locust.
# Locust's exit status is the container's: 0 ok, 1 errors over the limit, 2 could not start,
# 3 SLO missed, 4 client-bound, 5 incomplete, 130 interrupted (python -m llmload.results.exitcodes).
set -eu

role="${LLMLOAD_ROLE:-standalone}"
locustfile="${LOCUST_LOCUSTFILE:-/app/locustfiles/chat.py}"

# The root filesystem is read-only: HOME and MPLCONFIGDIR point into the /tmp emptyDir, which
# starts empty.
for dir in "${HOME:-}" "${MPLCONFIGDIR:-}"; do
    if [ -n "$dir" ]; then
        mkdir -p "$dir" 2>/dev/null || true
    fi
done

case "$role" in
    master)
        exec locust -f "$locustfile" --master --headless "$@"
        ;;
    worker)
        exec locust -f "$locustfile" --worker "$@"
        ;;
    standalone)
        exec locust -f "$locustfile" --headless "$@"
        ;;
    *)
        echo "llmload: unknown LLMLOAD_ROLE '$role': set it to master, worker or standalone" >&2
        exit 2
        ;;
esac
