#!/usr/bin/env bash
# Tests of scanlab-linrec's reverse solves, backward pass and layouts (channels-last,
# offsets) as users run them.
# Usage: linrec_app_test.sh CASE BINDIR
#   Errors    --backward with another form, with --reverse or --final, a dL/dx of another
#             shape, --grad-* without --backward or to standard output, a missing file: one
#             line naming the problem, exit 1 or 2, nothing written; offsets that do not
#             start at 0, decrease or do not end at n, offsets that are not integers, and
#             --layout / --channels / --offsets misused, the same way; found before a GPU is
#             looked for, so this runs everywhere
#   Validate  --reverse (every form, --final, both batch layouts) and --backward (generated
#             and from a file, one sequence and batches in both layouts, n = 1 and 300007):
#             --validate passes, -o and --grad-a/--grad-b/--grad-x0 hold arrays of the right
#             shapes; --layout btc (generated, every form, --final, --reverse, --backward)
#             and --offsets (int64 and int32 .npy, empty sequences, --final, --reverse,
#             --backward) the same way (skipped without a GPU: exit 77)
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

# write_offsets FILE DESCR V...: a 1-D integer .npy ("<i8" or "<i4") of the values.
write_offsets() {
  python3 -c '
import array, sys
path, descr, values = sys.argv[1], sys.argv[2], [int(v) for v in sys.argv[3:]]
q = chr(39)
header = "{%sdescr%s: %s%s%s, %sfortran_order%s: False, %sshape%s: (%d,), }" % (q, q, q, descr, q, q, q, q, q, len(values))
header += " " * (63 - (10 + len(header)) % 64) + "\n"
body = array.array("q" if descr == "<i8" else "i", values).tobytes()
open(path, "wb").write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + body)' "$@"
}

# random_offsets FILE DESCR S MAXLEN SEED: S sequences of random lengths 0 .. MAXLEN (some empty).
random_offsets() {
  local file=$1 descr=$2
  write_offsets "$file" "$descr" $(python3 -c '
import random, sys
s, most, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng, total, out = random.Random(seed), 0, [0]
for _ in range(s):
    total += 0 if rng.random() < 0.05 else rng.randint(1, most)
    out.append(total)
print(" ".join(map(str, out)))' "$3" "$4" "$5")
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
    # Offsets: checked on the host, nothing written (expect_error: -o is not written).
    write_offsets "$tmp/down.npy" "<i8" 0 60 50 100
    expect_error 1 "not nondecreasing: offsets[2] = 50 < offsets[1] = 60" -i "$tmp/a.npy" --offsets "$tmp/down.npy"
    write_offsets "$tmp/start.npy" "<i4" 5 100
    expect_error 1 "offsets[0] is 5, not 0" -i "$tmp/a.npy" --offsets "$tmp/start.npy"
    write_offsets "$tmp/short.npy" "<i8" 0 40 99
    expect_error 1 "offsets[2] = 99, is not n = 100" -i "$tmp/a.npy" --offsets "$tmp/short.npy" --backward \
      --grad-a "$tmp/da.npy"
    [[ ! -e "$tmp/da.npy" ]] || fail "a refused run wrote --grad-a"
    expect_error 1 "float32 values, int64 or int32 expected" -i "$tmp/a.npy" --offsets "$tmp/a.npy"
    write_offsets "$tmp/good.npy" "<i8" 0 40 100
    expect_error 2 "not with --layout btc" -i "$tmp/a.npy" --offsets "$tmp/good.npy" --layout btc
    expect_error 2 "not with --interleaved" -i "$tmp/a.npy" --offsets "$tmp/good.npy" --interleaved
    expect_error 2 "--channels needs --layout btc" --n 100 --channels 4
    expect_error 1 "--layout btc needs 3 dimensions [batch, length, channels]" -i "$tmp/a.npy" --layout btc
    expect_error 2 "--channels must be at least 1" --layout btc --channels 0
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
    # Channels-last [batch, length, channels], generated: every form, both directions, final
    # states, the backward pass (one sequence per (b, c): 4 * 48 of them).
    btc=(--layout btc --batch 4 --n 1000 --channels 48)
    run "btc" "${btc[@]}" --x0 0.5 -o "$tmp/x.npy"
    expect_shape "$tmp/x.npy" "(4, 1000, 48)"
    run "btc final" "${btc[@]}" --final -o "$tmp/x.npy"
    expect_shape "$tmp/x.npy" "(192,)"
    run "btc reverse" "${btc[@]}" --reverse --dtype float64 -o "$tmp/x.npy"
    expect_shape "$tmp/x.npy" "(4, 1000, 48)"
    run "btc lambda" "${btc[@]}" --lambda
    run "btc ema" "${btc[@]}" --ema 0.1 --reverse --final
    run "btc backward" "${btc[@]}" --x0 -0.5 --backward --grad-a "$tmp/da.npy" --grad-x0 "$tmp/dx0.npy"
    expect_shape "$tmp/da.npy" "(4, 1000, 48)"
    expect_shape "$tmp/dx0.npy" "(192,)"
    run "btc one channel" --layout btc --batch 8 --n 777 --channels 1 --backward
    # Offsets: int64 and int32 files, empty sequences, a and b from files (n elements) or
    # generated (as many as the last offset).
    random_offsets "$tmp/o64.npy" "<i8" 3000 300 11
    random_offsets "$tmp/o32.npy" "<i4" 500 3000 12
    total=$(python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(int.from_bytes(d[-8:], "little"))' "$tmp/o64.npy")
    sequences=3000
    "$gen" --dist uniform --dtype float32 --n "$total" -o "$tmp/va.npy" -q || fail "scanlab-gen"
    "$gen" --dist normal --dtype float32 --n "$total" --seed 9 -o "$tmp/vb.npy" -q || fail "scanlab-gen"
    run "offsets" -i "$tmp/va.npy" -b "$tmp/vb.npy" --offsets "$tmp/o64.npy" -o "$tmp/x.npy"
    expect_shape "$tmp/x.npy" "($total,)"
    run "offsets final" -i "$tmp/va.npy" -b "$tmp/vb.npy" --offsets "$tmp/o64.npy" --final --x0 1 -o "$tmp/x.npy"
    expect_shape "$tmp/x.npy" "($sequences,)"
    run "offsets reverse" --offsets "$tmp/o64.npy" --reverse --dtype float64 --a-range -1,1
    run "offsets int32 ema" --offsets "$tmp/o32.npy" --ema 0.05 --final
    run "offsets backward" -i "$tmp/va.npy" -b "$tmp/vb.npy" --offsets "$tmp/o64.npy" --x0 0.25 --backward \
      --grad-a "$tmp/da.npy" --grad-b "$tmp/db.npy" --grad-x0 "$tmp/dx0.npy"
    expect_shape "$tmp/da.npy" "($total,)"
    expect_shape "$tmp/db.npy" "($total,)"
    expect_shape "$tmp/dx0.npy" "($sequences,)"
    write_offsets "$tmp/empty.npy" "<i8" 0 0 0
    run "offsets, only empty sequences" --offsets "$tmp/empty.npy" --final --x0 2 -o "$tmp/x.npy"
    expect_shape "$tmp/x.npy" "(2,)"
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
exit $status
