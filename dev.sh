#!/bin/sh
# Sets up .venv (first run, or when pyproject.toml changed) and runs the demo or the tests.
#   ./dev.sh demo [--date YYYY-MM-DD] [--days N]
#   ./dev.sh test [pytest args]
set -eu
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "dev.sh: needs Python 3.11 or newer as \$PYTHON or python3" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
if [ ! -f .venv/.installed ] || [ pyproject.toml -nt .venv/.installed ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[dev]'
    touch .venv/.installed
fi

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
    demo) exec .venv/bin/visibility demo "$@" ;;
    test) exec .venv/bin/python -m pytest "$@" ;;
    *) echo "usage: ./dev.sh demo [--date YYYY-MM-DD] [--days N] | ./dev.sh test [pytest args]" >&2; exit 2 ;;
esac
