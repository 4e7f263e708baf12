#!/usr/bin/env bash
# Makes the static archive that ships: one relocatable object, a partial link
# of every member of cargo's liblance_c.a, in which only the functions lance.h
# declares stay global.  Everything else the library holds (std, the Rust
# crates, their C libraries such as zstd and lz4, the CPU check) becomes
# local, so a program links it next to its own copies of those without a
# clash or a silent swap, and without --whole-archive.
#   hide_symbols.sh lance.h cargo/liblance_c.a out/liblance_c.a
# LD, OBJCOPY, AR and NM name the binutils to use (default: ld, objcopy, ...).
set -euo pipefail
header=$1
archive=$2
out=$3
ld=${LD:-ld} objcopy=${OBJCOPY:-objcopy} ar=${AR:-ar} nm=${NM:-nm}
work=$(mktemp -d "$(dirname "$out")/.hide_symbols.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$(dirname "$0")/api_functions.sh" "$header" >"$work/api"

started=$(date +%s)
# --force-group-allocation: COMDAT groups are resolved here, once, and
# dissolved; a group left in the object would be matched by its name against
# the program's own groups (another Rust library brings the same ones, such
# as DW.ref.rust_eh_personality) and the program's copy, with a local symbol
# of ours bound to it, could be dropped.
# --unique: every input section stays a section of its own.  A partial link
# otherwise merges same-named sections of different members (a generic
# function instantiated alike in two crates, .text.<symbol> in both) and a
# program's --gc-sections can then only keep or drop them together: 7% more
# code in a linked program, against 0.5% with --unique.
# -b: read the members as what they are, native objects; without it an LTO
# plugin installed for ld (LLVMgold) tries, and fails, to read the bitcode
# that std's objects carry, once per member.
"$ld" -r -b "$("$ld" --print-output-format)" --unique --whole-archive --force-group-allocation \
  -o "$work/lance_c.o" "$archive"
linked=$(date +%s)
# Removed: .llvmbc/.llvmcmd, the LLVM bitcode std's members carry for
# cross-crate LTO, which a C link never reads (and which makes binutils' LTO
# plugins try to), and .llvm_addrsig, lld's address-significance tables,
# whose symbol indices the partial link concatenated into nonsense (without
# one, lld treats every symbol as address-significant: correct, if less folded).
"$objcopy" --keep-global-symbols="$work/api" \
  --remove-section=.llvmbc --remove-section=.llvmcmd --remove-section=.llvm_addrsig "$work/lance_c.o"

# The result: the API defined and global, nothing else defined and global.
globals=$("$nm" -g --defined-only "$work/lance_c.o" | awk '{print $3}' | sort -u)
leaked=$(comm -13 "$work/api" <(echo "$globals"))
missing=$(comm -23 "$work/api" <(echo "$globals"))
[ -z "$leaked" ] || { echo "hide_symbols: still global: $leaked" >&2; exit 1; }
[ -z "$missing" ] || { echo "hide_symbols: not defined: $missing" >&2; exit 1; }

rm -f "$work/out.a"
"$ar" rcsD "$work/out.a" "$work/lance_c.o"
mv "$work/out.a" "$out"
echo "hide_symbols: $(wc -l <"$work/api") global functions, partial link $((linked - started)) s, total $(($(date +%s) - started)) s"
