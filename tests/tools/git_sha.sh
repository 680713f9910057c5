#!/usr/bin/env bash
# The git SHA is read at build time (cmake/git_sha.cmake runs at every build): in a scratch
# repository, a commit and an edit each change the generated header, and a run with nothing
# changed leaves it untouched (so nothing recompiles). Usage: git_sha.sh <cmake/git_sha.cmake>
set -euo pipefail
script=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
header=$tmp/git_sha.hpp
git init -q "$repo"
git -C "$repo" -c user.email=t@t -c user.name=t commit -q --allow-empty -m one
echo a > "$repo/f"
git -C "$repo" add f
git -C "$repo" -c user.email=t@t -c user.name=t commit -q -m two
stamp() { cmake -DSOURCE_DIR="$repo" -DOUTPUT="$header" -P "$script"; }
fail=0
expect() { grep -qF "\"$1\"" "$header" || { echo "expected $1, header: $(cat "$header")"; fail=1; }; }

stamp
expect "$(git -C "$repo" rev-parse HEAD)"
before=$(stat -c %Y.%s "$header")
sleep 1
stamp
[[ $(stat -c %Y.%s "$header") == "$before" ]] || { echo "rewritten with nothing changed"; fail=1; }
echo b > "$repo/f"
stamp
expect "$(git -C "$repo" rev-parse HEAD)-dirty"
git -C "$repo" -c user.email=t@t -c user.name=t commit -q -am three
stamp
expect "$(git -C "$repo" rev-parse HEAD)"
exit $fail
