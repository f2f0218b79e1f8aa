#!/usr/bin/env bash
# Tests of scanlab-linrec's reverse solves and backward pass as users run them.
# Usage: linrec_app_test.sh CASE BINDIR
#   Errors    --backward with another form, with --reverse or --final, a dL/dx of another
#             shape, --grad-* without --backward or to standard output, a missing file: one
#             line naming the problem, exit 1 or 2, nothing written; found before a GPU is
#             looked for, so this runs everywhere
#   Validate  --reverse (every form, --final, both batch layouts) and --backward (generated
#             and from a file, one sequence and batches in both layouts, n = 1 and 300007):
#             --validate passes, -o and --grad-a/--grad-b/--grad-x0 hold arrays of the right
#             shapes (skipped without a GPU: exit 77)
set -uo pipefail
case_name="$1" bin="$2"
app="$bin/scanlab-linrec" gen="$bin/scanlab-gen"
source "$(dirname "${BASH_SOURCE[0]}")/../common/app_test_lib.sh"

# npy_shape FILE: the shape in a .npy header, e.g. "(64, 1000)".
npy_shape() {
  python3 -c '
import ast, sys
data = open(sys.argv[1], "rb").read()
start = 10 if data[6] == 1 else 12
length = int.from_bytes(data[8:start], "little")
print(tuple(ast.literal_eval(data[start:start + length].decode())["shape"]))' "$1"
}

case "$case_name" in
  Errors)
    "$gen" --dist uniform --dtype float32 --n 100 -o "$tmp/a.npy" -q || fail "scanlab-gen"
    "$gen" --dist uniform --dtype float32 --n 99 -o "$tmp/g99.npy" -q || fail "scanlab-gen"
    expect_error 2 "--backward is the backward pass of the (a, b) form" -i "$tmp/a.npy" --backward --lambda
    expect_error 2 "--backward is the backward pass of the (a, b) form" -i "$tmp/a.npy" --backward --ema 0.5
    expect_error 2 "not with --reverse" -i "$tmp/a.npy" --backward --reverse
    expect_error 2 "not with --final" -i "$tmp/a.npy" --backward --final
    expect_error 2 "--grad-a needs --backward" -i "$tmp/a.npy" --grad-a "$tmp/da.npy"
    expect_error 2 "--grad-x0 -: the gradients are written to files" -i "$tmp/a.npy" --backward --grad-x0 -
    expect_error 2 "does not exist" -i "$tmp/a.npy" --backward "$tmp/missing.npy"
    expect_error 1 "a and dL/dx must have the same shape" -i "$tmp/a.npy" --backward "$tmp/g99.npy" \
      --grad-a "$tmp/da.npy"
    [[ ! -e "$tmp/da.npy" ]] || fail "a refused run wrote --grad-a"
    ;;
  Validate)
    "$gen" --dist uniform --dtype float32 --n 10 -o "$tmp/probe.npy" -q || fail "scanlab-gen"
    "$app" -i "$tmp/probe.npy" -q > /dev/null 2>&1
    [[ $? == 3 ]] && { echo "SKIP: no usable GPU"; exit 77; }
    # run LABEL ARGS...: --validate passes (60 s at most).
    run() {
      local label=$1; shift
      timeout 60 "$app" "$@" --validate -q > "$tmp/stdout" 2>&1 || fail "$label: $(tail -6 "$tmp/stdout")"
    }
    # expect_shape FILE SHAPE
    expect_shape() {
      [[ -s "$1" ]] || { fail "$1 not written"; return; }
      local got; got=$(npy_shape "$1")
      [[ $got == "$2" ]] || fail "$1 has shape $got, expected $2"
      rm -f "$1"
    }
    n=300007
    for size in 1 $n; do
      run "reverse n=$size" --n $size --reverse -o "$tmp/x.npy"
      expect_shape "$tmp/x.npy" "($size,)"
      run "reverse final n=$size" --n $size --reverse --final --x0 0.5 -o "$tmp/x.npy"
      expect_shape "$tmp/x.npy" "(1,)"
      run "reverse lambda n=$size" --n $size --reverse --lambda
      run "reverse ema n=$size" --n $size --reverse --ema 0.1 --dtype float64
      run "backward n=$size" --n $size --x0 0.25 --backward -o "$tmp/x.npy" --grad-a "$tmp/da.npy" \
        --grad-b "$tmp/db.npy" --grad-x0 "$tmp/dx0.npy"
      expect_shape "$tmp/x.npy" "($size,)"
      expect_shape "$tmp/da.npy" "($size,)"
      expect_shape "$tmp/db.npy" "($size,)"
      expect_shape "$tmp/dx0.npy" "(1,)"
    done
    for layout in "" --interleaved; do
      shape="(64, 1000)"; [[ -n $layout ]] && shape="(1000, 64)"
      run "reverse batch $layout" --n 1000 --batch 64 $layout --reverse --x0 -1 -o "$tmp/x.npy"
      expect_shape "$tmp/x.npy" "$shape"
      run "reverse final batch $layout" --n 1000 --batch 64 $layout --reverse --final -o "$tmp/x.npy"
      expect_shape "$tmp/x.npy" "(64,)"
      run "backward batch $layout" --n 1000 --batch 64 $layout --x0 0.5 --dtype float64 --backward \
        --grad-a "$tmp/da.npy" --grad-b "$tmp/db.npy" --grad-x0 "$tmp/dx0.npy"
      expect_shape "$tmp/da.npy" "$shape"
      expect_shape "$tmp/db.npy" "$shape"
      expect_shape "$tmp/dx0.npy" "(64,)"
    done
    # dL/dx from a file (another dtype: converted), a and b from files.
    "$gen" --dist uniform --dtype float32 --n $n -o "$tmp/a.npy" -q || fail "scanlab-gen"
    "$gen" --dist normal --dtype float32 --n $n --seed 5 -o "$tmp/b.npy" -q || fail "scanlab-gen"
    "$gen" --dist normal --dtype float64 --n $n --seed 6 -o "$tmp/g.npy" -q || fail "scanlab-gen"
    run "backward from files" -i "$tmp/a.npy" -b "$tmp/b.npy" --backward "$tmp/g.npy" --grad-b "$tmp/db.npy"
    expect_shape "$tmp/db.npy" "($n,)"
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
exit $status
