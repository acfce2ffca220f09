#!/usr/bin/env bash
# tests/docs_links.sh SRCDIR: the documentation points only at what exists.
#
# Fails when a Markdown file of the repository (README.md, docs/, gpu/apps/README.md, ...)
#  - links to a repository file that does not exist: a Markdown link `[text](path)`, or a
#    path in backquotes that starts with a top-level folder (`src/core/sched.c`) or names a
#    result (`h100-2026-11-22-void-ab.txt`, looked up in bench/results/);
#  - refers to a file outside the repository (../shared/..., DESIGN.md);
# and when bench/results/ holds a file that no such document cites, by its path, its name or
# a folder above it: results stay only while a document says what they show.
set -uo pipefail
src=${1:?usage: docs_links.sh SRCDIR}
cd "$src" || exit 1

fails=0
fail() {
  echo "docs_links: $*" >&2
  fails=$((fails + 1))
}

# Every Markdown file but build folders, dependencies and the raw results themselves; in a
# git checkout, only those git tracks or would track (what a clean clone has: not the
# ignored scratch copies of older trees).
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t docs < <(git ls-files --cached --others --exclude-standard -- '*.md' \
                        | grep -v '^bench/results/' | while IFS= read -r f; do [ -f "$f" ] && echo "$f"; done | sort)
else
  mapfile -t docs < <(find . \( -name '.git' -o -name '.deps' -o -name 'build*' -o -path './bench/results' \) -prune \
                        -o -type f -name '*.md' -print | sed 's|^\./||' | sort)
fi
[ ${#docs[@]} -gt 0 ] || { echo "docs_links: no Markdown files under $src" >&2; exit 1; }

top='(bench|cmake|docs|gpu|include|scripts|src|tests)'
for doc in "${docs[@]}"; do
  dir=$(dirname "$doc")
  # Markdown links, relative to the document.
  while IFS= read -r target; do
    case $target in
      http://* | https://* | mailto:* | '#'*) continue ;;
    esac
    path=${target%%#*}
    [ -z "$path" ] && continue
    [ -e "$dir/$path" ] || fail "$doc: link to a missing file: $target"
  done < <(grep -o '\]([^)[:space:]]*)' "$doc" | sed 's/^](//; s/)$//')
  # Paths in backquotes, relative to the repository root.
  while IFS= read -r token; do
    path=${token%%:[0-9]*}
    case $path in
      *NAME* | *FILE* | *KERNEL* | *'*'*) continue ;;
    esac
    if [[ $path =~ ^$top/ ]]; then
      [ -e "$path" ] || fail "$doc: names a missing path: $token"
    elif [[ $path =~ ^[hH][0-9]{3}-20[0-9][0-9]- ]]; then
      [ -e "bench/results/$path" ] || fail "$doc: names a missing result: $token"
    fi
  done < <(grep -o '`[^` ]*`' "$doc" | tr -d '`')
  # Nothing outside the repository.
  grep -n -e '\.\./shared' -e 'DESIGN\.md' "$doc" | while IFS= read -r line; do
    echo "docs_links: $doc:${line%%:*}: refers to a file outside the repository" >&2
  done
  if grep -q -e '\.\./shared' -e 'DESIGN\.md' "$doc"; then
    fails=$((fails + 1))
  fi
done

# What the documents cite in bench/results: paths relative to it, names, folders. A path
# after a commit (`git show REV:bench/results/...`) is history, not a citation.
cited=$(cat "${docs[@]}" |
        grep -oE '([0-9a-f]{7,40}:)?(bench/results/|[hH][0-9]{3}-20[0-9][0-9]-)[A-Za-z0-9._/-]*|[a-z0-9-]+\.json' |
        grep -vE '^[0-9a-f]{7,40}:' | sed -E 's|^bench/results/||; s|[.,/]+$||' | sort -u)
is_cited() {
  local r=$1
  while [ -n "$r" ] && [ "$r" != . ]; do
    grep -qxF -- "$r" <<< "$cited" && return 0
    r=$(dirname "$r")
  done
  return 1
}
uncited=0
while IFS= read -r f; do
  rel=${f#bench/results/}
  if ! is_cited "$rel"; then
    echo "docs_links: bench/results/$rel: cited by no document (cite it or remove it)" >&2
    uncited=$((uncited + 1))
  fi
done < <(find bench/results -type f | sort)
[ $uncited -gt 0 ] && fails=$((fails + 1))

if [ $fails -gt 0 ]; then
  echo "docs_links: FAILED" >&2
  exit 1
fi
echo "docs_links: ${#docs[@]} documents, $(find bench/results -type f | wc -l) result files, all links resolve"
