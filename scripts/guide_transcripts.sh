#!/usr/bin/env bash
# Build the example repositories of docs/guide.md in a temp dir and run every command the
# guide quotes, printing each as `$ command`, its output and `[exit N]`. The guide's
# transcripts are copied from this output; rerun it after a change to what the commands print.
#
#   scripts/guide_transcripts.sh [KEEP_DIR]
#
# Needs `tools` on PATH, git and a C compiler (`cc`). Identities and dates are fixed, so the
# commit ids are the same on every run (except after a mutation run, whose ledger records
# carry the time they were made). Nothing is left behind unless KEEP_DIR is given.
set -u

work=$(mktemp -d)
if [ $# -ge 1 ]; then
    mkdir -p "$1"
    work=$(cd "$1" && pwd)
else
    trap 'rm -rf "$work"' EXIT
fi

export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Ada Agent" GIT_AUTHOR_EMAIL="ada@example.com"
export GIT_COMMITTER_NAME="Ada Agent" GIT_COMMITTER_EMAIL="ada@example.com"
export NO_COLOR=1
mkdir -p "$HOME"

tick=0
clock() {  # one minute later for every commit: fixed dates, fixed ids
    tick=$((tick + 1))
    local stamp
    stamp=$(printf '2026-03-%02dT%02d:%02d:00Z' $((1 + tick / 600)) $((tick / 60 % 10 + 8)) $((tick % 60)))
    export GIT_AUTHOR_DATE="$stamp" GIT_COMMITTER_DATE="$stamp"
}

show() {  # print the command, run it, print its output and exit status
    printf '$ %s\n' "$*"
    bash -c "$*" 2>&1
    printf '[exit %d]\n\n' $?
}

scene() { printf '\n######## %s (in %s)\n\n' "$1" "$PWD"; }

# A message the way the protocol wants it: subject, body, marker paragraph, trailers.
protocol_message() {  # subject body
    printf '%s\n\n%s\n\nFOLLOWING_AGENTS_PROTOCOL\n\nFollowing-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: claude:opus-4 [claude-code]\n' "$1" "$2"
}

# ---------------------------------------------------------------------------------------------
# 1. A day in the life: the calculator, its hooks, a pull request, a mutation run
# ---------------------------------------------------------------------------------------------
cd "$work" || exit 1
git init -q --bare -b main calc.git
git clone -q calc.git calc 2>/dev/null
cd calc || exit 1
mkdir -p src tests docs
cat > src/calc.c <<'EOF'
#include "calc.h"

int add(int a, int b) { return a + b; }
int sub(int a, int b) { return a - b; }
EOF
cat > src/calc.h <<'EOF'
int add(int a, int b);
int sub(int a, int b);
EOF
cat > tests/test_calc.c <<'EOF'
#include "../src/calc.h"

int main(void) {
    if (add(2, 3) != 5) return 1;
    if (sub(2, 3) != -1) return 2;
    return 0;
}
EOF
cat > Makefile <<'EOF'
build/test_calc: src/calc.c src/calc.h tests/test_calc.c
	mkdir -p build && cc -o build/test_calc src/calc.c tests/test_calc.c
test: build/test_calc
	./build/test_calc
.PHONY: test
EOF
printf 'build/\n' > .gitignore
printf '# calc\n\n`add` and `sub` for ints. See [the API](docs/api.md).\n' > README.md
printf '# API\n\n- `add(a, b)`: the sum.\n- `sub(a, b)`: the difference.\n' > docs/api.md
git add -A && clock && git commit -q -F <(protocol_message "Start the calculator" \
    "Two operations and a test that builds with make.")
git push -q origin main

scene "tools init in the calculator"
show 'tools init'
# init stamps the digest with today's date; fix it, so the commit ids are the same every run.
sed -i 's/now-updated: [0-9-]*/now-updated: 2026-03-01/' .agents/NOW.md
show 'tools ratchet tighten'
git add -A
clock
protocol_message "Adopt the tools gates" \
    "The starter config, the digest, the issue index and a zero baseline for the device ratchet." > ../msg-adopt.txt
show 'git commit -q -F ../msg-adopt.txt'
git push -q origin main

scene "an agent's commit through the hooks"
git switch -q -c agent/mul
cat >> src/calc.c <<'EOF'
int mul(int a, int b) { return a * b; }
EOF
printf 'int mul(int a, int b);\n' >> src/calc.h
printf -- '- `mul(a, b)`: the product.\n' >> docs/api.md
git add -A
clock
show 'git commit -q -m "Add mul."'
protocol_message "Add mul" "Multiplication, declared in calc.h and listed in docs/api.md." > ../msg-mul.txt
show 'git commit -q -F ../msg-mul.txt'

scene "a pull request in CI"
# A second commit pushed from a machine without the hooks: device code in shared src/.
cat >> src/calc.c <<'EOF'
int on_device(int kind) { return kind == kCUDA; }
EOF
git add -A && clock && git commit -q --no-verify -m "Pick the device in calc.c" \
    -m "The CPU path must know when it runs beside a GPU."
show 'tools preflight --require-commits'
show 'tools preflight --require-commits --format github | head -n 4'
show "tools trailers check --commit $(git rev-parse --short=12 HEAD)"
git reset -q --hard HEAD~1

scene "a maintainer's mutation run"
mkdir -p specs/plans
cat > specs/calc.md <<'EOF'
# The calculator

## Owed

- #1: `add` and `sub` are exact for every pair of ints that does not overflow.

## Now

- `make test` checks both operations.
EOF
cat > specs/plans/add.yaml <<'EOF'
spec: specs/calc.md
build: "make -s build/test_calc"
test: "make -s test"
arms:
  - name: control
  - name: add-subtracts
    replace: {path: src/calc.c, old: "return a + b;", new: "return a - b;", count: 1}
expect: {control: GREEN, add-subtracts: RED}
EOF
show 'tools index append --issue 1 --row C1 --title "add and sub are exact" --kind feature'
git add -A && clock && git commit -q -F <(protocol_message "Plan the add mutation" \
    "A control arm and one that breaks add, to prove the test catches it.") > /dev/null 2>&1
show 'tools mutate run specs/plans/add.yaml -j 2'
show 'sed -n "/## Now/,\$p" specs/calc.md'
show 'tools spec check && tools ledger verify'
git add -A && clock && git commit -q -F <(protocol_message "Record the add mutation run" \
    "The ledger records and the table rendered into the spec.") > /dev/null 2>&1

cd "$work" || exit 1
git init -q -b main solo
cd solo || exit 1
scene "skips and exit codes"
tools init > /dev/null 2>&1
sed -i 's/now-updated: [0-9-]*/now-updated: 2026-03-01/' .agents/NOW.md
# `tools init` wrote the detected base (main); this scene shows a base that does not resolve.
sed -i 's/^base: .*/base: origin\/main/' .agents/protocol.yaml
git add -A && clock && git commit -q -F <(protocol_message "Start solo" "A repository without a remote.") > /dev/null 2>&1
show 'tools preflight --gate trailers --gate now'
show 'tools preflight --gate trailers --gate now --fail-on-skip'
show 'tools trailers check --base no-such-branch'
show 'tools trailers check --commit HEAD'
show 'tools trailers check --base HEAD --require-commits'

# ---------------------------------------------------------------------------------------------
# 2. Adopting the gates in an existing repository with a long history
# ---------------------------------------------------------------------------------------------
cd "$work" || exit 1
git init -q --bare -b main engine.git
git clone -q engine.git engine 2>/dev/null
cd engine || exit 1
mkdir -p src/cuda include docs
cat > include/engine.h <<'EOF'
/* The engine's public API. */
int engine_open(const char *path);
EOF
printf '# API\n\n- `engine_open(path)`\n' > docs/api.md
printf '# engine\n\nAn inference engine. The API: [docs/api.md](docs/api.md).\n' > README.md
cat > src/engine.c <<'EOF'
#include "../include/engine.h"

int engine_open(const char *path) { return path != 0; }
EOF
printf '__global__ void launch(void) {}\n' > src/cuda/launch.cu
git add -A && clock && git commit -q -m "Import the engine" -m "The code as it stood before this repository."

# 39 commits by agents that already wrote the marker paragraph; the trailer contract is new.
# Commit 9 forgot the marker, 17 ends its subject with a period, 23 has no body.
history() {
    local n=$1 subject body marker=yes
    case $((n % 4)) in
    0)  # a new API function: header and docs together
        subject="Add engine_step$n"
        body="A new entry point, declared in engine.h and listed in docs/api.md."
        printf 'int engine_step%d(int n);\n' "$n" >> include/engine.h
        printf -- '- `engine_step%d(n)`\n' "$n" >> docs/api.md
        printf 'int engine_step%d(int n) { return n + %d; }\n' "$n" "$n" >> src/engine.c ;;
    1)  # a comment in the header, no docs
        subject="Explain the header, part $n"
        body="A comment above the declarations; no API change."
        printf '/* note %d: calls are not thread-safe */\n' "$n" >> include/engine.h ;;
    2)  # device code creeps into shared code
        subject="Tune the device path $n"
        body="Branches on the device in shared code, for now."
        if [ "$n" -le 14 ]; then
            printf 'int dev%d(int d) { return d == kCUDA; }\n' "$n" >> src/engine.c
        else
            printf '#ifdef VT_CUDA\nint fast%d(void) { return 1; }\n#endif\n' "$n" >> src/engine.c
        fi ;;
    3)  # plain work
        subject="Refactor the loader $n"
        body="Smaller functions, same behaviour."
        printf '/* loader step %d */\n' "$n" >> src/engine.c ;;
    esac
    [ "$n" -eq 9 ] && marker=no
    [ "$n" -eq 17 ] && subject="$subject."
    [ "$n" -eq 23 ] && body=""
    {
        printf '%s\n\n' "$subject"
        [ -n "$body" ] && printf '%s\n\n' "$body"
        [ "$marker" = yes ] && printf 'FOLLOWING_AGENTS_PROTOCOL\n'
    } > ../msg.txt
    git add -A && clock && git commit -q --cleanup=verbatim -F ../msg.txt
}
for n in $(seq 2 40); do history "$n"; done
git push -q origin main
ROOT=$(git rev-list --max-parents=0 HEAD)
export ROOT  # the shown commands name it as $ROOT

scene "adoption: the history"
show 'git log --oneline | wc -l'
show 'git log --format="%h %s" -n 3'
show 'git log --format=%B -n 1'

scene "adoption: tools init"
show 'tools init'
sed -i 's/now-updated: [0-9-]*/now-updated: 2026-03-01/' .agents/NOW.md

scene "adoption: the debt, over the whole history"
printf '$ ROOT=$(git rev-list --max-parents=0 HEAD)\n\n'
show "tools preflight --base \$ROOT | grep -E '^(ok|FAIL|SKIP)|green'"
show "tools preflight --base \$ROOT --format json | python3 -c '
import collections, json, sys
report = json.load(sys.stdin)
count = collections.Counter((g[\"gate\"], f[\"rule\"], f[\"severity\"]) for g in report[\"gates\"] for f in g[\"findings\"])
for (gate, rule, severity), n in sorted(count.items()):
    print(f\"{n:4}  {gate:9} {rule:20} {severity}\")'"

scene "adoption: the adoption commit"
show 'tools ratchet tighten'
git add -A
clock
protocol_message "Adopt the tools gates" \
    "The starter config, the digest, the issue index, and the device ratchet's baseline at today's counts." > ../msg-adopt.txt
show 'git commit -q -F ../msg-adopt.txt'
adopt=$(git rev-parse HEAD)
git push -q origin main
show 'git log --format="%h %s" -n 1'

scene "adoption: cutover"
# The starter's trailers section moves to the end, where the next scenes add to it.
sed -i '/^trailers:$/,/^  fixups: allow$/d' .agents/protocol.yaml
cat >> .agents/protocol.yaml <<EOF

trailers:
  merges: skip
  fixups: allow
  # The first commit judged by every trailer rule: the adoption. Older commits need only
  # the marker paragraph.
  cutover: ${adopt:0:12}
EOF
show "tools trailers check --base \$ROOT"
show "tools style check --base \$ROOT"

scene "adoption: exceptions"
c9=$(git log --format=%h --abbrev=12 --grep=' 9$' -n 1)
c17=$(git log --format=%h --abbrev=12 --grep=' 17\.$' -n 1)
c23=$(git log --format=%h --abbrev=12 --grep=' 23$' -n 1)
cat >> .agents/protocol.yaml <<EOF
  exceptions:
    - {commit: $c9, rule: marker-missing, reason: landed before the hooks}
    - {commit: $c17, rule: subject-period, reason: landed before the hooks}
    - {commit: $c23, rule: body-missing, reason: landed before the hooks}
EOF
show "sed -n '/^trailers:/,\$p' .agents/protocol.yaml"
show "tools trailers check --base \$ROOT && tools style check --base \$ROOT"

scene "adoption: ratchet baselines"
show 'cat .agents/baselines/device-leakage.json'
show 'tools ratchet check'
# A cleanup: one kCUDA site goes.
sed -i '/int dev6(/d' src/engine.c
show 'tools ratchet check'
show 'tools ratchet tighten'
show 'git diff --stat'

scene "adoption: a docs rule, narrow first"
cat >> .agents/protocol.yaml <<'EOF'

docs:
  rules:
    - name: api-docs
      when_changed: ["include/**"]
      require_changed: ["docs/**"]
EOF
show "tools docs check --base \$ROOT | head -n 4"
show "tools docs check --base \$ROOT --format json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)[\"gates\"][0][\"findings\"]))'"
cat >> .agents/protocol.yaml <<'EOF'
      # A new declaration in a public header, not any edit of one.
      when_added_line: '^\w[\w \t*]*\(.*\);'
      message: a new API function is listed in docs/api.md
EOF
show "tools docs check --base \$ROOT"

scene "adoption: the audit, and what CI sees"
git add -A
clock
protocol_message "Judge the history from the adoption on" \
    "Set the cutover, keep three known findings as debt, lower the device baseline and require docs for new API declarations." > ../msg-cut.txt
show 'git commit -q -F ../msg-cut.txt'
show "tools preflight --base \$ROOT"
git push -q origin main
git switch -q -c agent/step41
printf 'int engine_step41(int n);\n' >> include/engine.h
printf 'int engine_step41(int n) { return n + 41; }\n' >> src/engine.c
git add -A
clock
protocol_message "Add engine_step41" "A new entry point." > ../msg-41.txt
show 'git commit -q --no-verify -F ../msg-41.txt'
show 'tools preflight'
