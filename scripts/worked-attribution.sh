#!/bin/sh
# The worked example of specs/mutation.md, on this repository's own history: which commit
# changed the text report's "(1 commits)" into "(1 commit)"?
#
# tools attribute bisects 81cbccfca426..a13aa2452217 in a temporary worktree with a test
# that passes while the old wording holds (a one-commit repository judged by `tools style
# check`, with the tools of the commit under test), proves the first bad commit both ways at
# the bad end, appends the attribution record to the ledger and renders its evidence table
# into specs/mutation.md.
# Run it with the project's virtual environment active (the test calls `python`):
#
#   . .venv/bin/activate && scripts/worked-attribution.sh
#
# Running it again appends a new record and replaces the table (one block per plan value).
set -eu
cd "$(git rev-parse --show-toplevel)"
good=81cbccfca426f3fb6a8990f5e7203d9cd9c31504
bad=a13aa2452217091f960cff85cdfed96b4a575a25
test='t=$(mktemp -d) && git -C "$t" init -q && git -C "$t" -c user.name=x -c user.email=x@example.com commit -q --allow-empty -m "One commit" -m "Body." && python -m tools --repo "$t" style check --commit HEAD > "$t/out"; grep -qF "(1 commits)" "$t/out"; rc=$?; rm -rf "$t"; exit $rc'
exec python -m tools attribute --good "$good" --bad "$bad" --test "$test" --spec specs/mutation.md
