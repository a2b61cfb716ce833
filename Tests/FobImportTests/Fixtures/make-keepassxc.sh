#!/usr/bin/env bash
# Makes keepassxc.csv and keepassxc.xml with the real keepassxc-cli (Debian
# keepassxc 2.7.4): keepassxc-source.xml (an export of a database made with
# `db-create`, `mkdir` and `add`, to which a hidden and a visible custom
# attribute, a TOTP seed and an attachment were added) is imported into a new
# database, which is then exported. Passwords go on stdin.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'dbpass\ndbpass\n' | keepassxc-cli import -q -p keepassxc-source.xml "$tmp/db.kdbx"
printf 'dbpass\n' | keepassxc-cli export -q -f csv "$tmp/db.kdbx" > keepassxc.csv
printf 'dbpass\n' | keepassxc-cli export -q -f xml "$tmp/db.kdbx" > keepassxc.xml
