#!/usr/bin/env bash
# Tests of scanlab-linrec's reverse solves, backward pass and layouts (channels-last,
# offsets) as users run them.
# Usage: linrec_app_test.sh CASE BINDIR
#   Errors    --backward with another form, with --reverse or --final, a dL/dx of another
#             shape, --grad-* without --backward or to standard output, a missing file: one
#             line naming the problem, exit 1 or 2, nothing written; offsets that do not
#             start at 0, decrease or do not end at n, offsets that are not integers, and
#             --layout / --channels / --offsets misused, the same way; the new element types:
#             a '<V2' .npy without --dtype bfloat16, complex text in or out, complex -b with
#             real -i, and other apps refusing float16 (--dtype and files); found before a GPU
#             is looked for, so this runs everywhere
#   Validate  --reverse (every form, --final, both batch layouts) and --backward (generated
#             and from a file, one sequence and batches in both layouts, n = 1 and 300007):
#             --validate passes, -o and --grad-a/--grad-b/--grad-x0 hold arrays of the right
#             shapes; --layout btc (generated, every form, --final, --reverse, --backward)
#             and --offsets (int64 and int32 .npy, empty sequences, --final, --reverse,
#             --backward) the same way; every element type (float16, bfloat16, complex64,
#             complex128: forward, --reverse, --final, --backward, interleaved, btc, offsets,
#             bfloat16 read from and written as '<V2') the same way (skipped without a GPU: exit 77)
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

# write_npy FILE DESCR SHAPE FORMAT V...: a .npy of the values packed with python's struct
# FORMAT letter ('e' float16, 'H' raw 16-bit words, 'f'/'d' for complex: re, im, re, im, ...).
write_npy() {
  python3 -c '
import struct, sys
path, descr, shape, fmt, values = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
q = chr(39)
header = "{%sdescr%s: %s%s%s, %sfortran_order%s: False, %sshape%s: %s, }" % (q, q, q, descr, q, q, q, q, q, shape)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
conv = int if fmt == "H" else float
body = struct.pack("<%d%s" % (len(values), fmt), *[conv(v) for v in values])
open(path, "wb").write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + body)' "$@"
}

# npy_descr FILE: the descr in a .npy header, e.g. "<V2".
npy_descr() {
  python3 -c '
import ast, sys
data = open(sys.argv[1], "rb").read()
start = 10 if data[6] == 1 else 12
length = int.from_bytes(data[8:start], "little")
print(ast.literal_eval(data[start:start + length].decode())["descr"])' "$1"
}

case "$case_name" in
  Errors)
    "$gen" --dist uniform --dtype float32 --n 100 -o "$tmp/a.npy" -q || fail "scanlab-gen"
    "$gen" --dist uniform --dtype float32 --n 99 -o "$tmp/g99.npy" -q || fail "scanlab-gen"
    expect_error 2 "--backward is the backward pass of the (a, b) form" -i "$tmp/a.npy" --backward --lambda
    expect_error 2 "--backward is the backward pass of the (a, b) form" -i "$tmp/a.npy" --backward --ema 0.5
    expect_error 2 "not with --reverse" -i "$tmp/a.npy" --backward --reverse
    expect_error 2 "not with --final" -i "$tmp/a.npy" --backward --final
    expect_error 2 "float32 and float64 only" --dtype float16 --n 10 --lambda
    expect_error 2 "float32 and float64 only" --dtype complex64 --n 10 --ema 0.5
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
    # The element types: bfloat16 as a 2-byte void only with --dtype bfloat16; complex text
    # refused both ways; complex b with real a refused; other apps refuse the new types.
    write_npy "$tmp/v2.npy" "<V2" "(4,)" H 16256 49216 16128 0  # bfloat16 1, -3, 0.5, 0
    expect_error 1 "2-byte void dtype '<V2' holds raw bytes" -i "$tmp/v2.npy"
    expect_error 1 "pass --dtype bfloat16" -i "$tmp/v2.npy" --dtype float16
    write_npy "$tmp/c64.npy" "<c8" "(4,)" f 0.5 0.1 -0.25 0 0.9 -0.3 0 0
    expect_error 2 "text output of complex64 is not supported" -i "$tmp/c64.npy" --backward \
      --grad-a "$tmp/da.txt"
    [[ ! -e "$tmp/da.txt" ]] || fail "a refused run wrote --grad-a"
    expect_error 1 "a complex64 array cannot be converted to float32" -i "$tmp/a.npy" -b "$tmp/c64.npy"
    printf '0.5\n0.25\n' > "$tmp/a.txt"
    expect_error 1 "text input of complex128 is not supported" -i "$tmp/a.txt" --dtype complex128
    write_npy "$tmp/h.npy" "<f2" "(4,)" e 0.5 0.25 -1 2
    for other in scanlab-scan scanlab-reduce; do
      [[ -x "$bin/$other" ]] || { echo "note: $other not built, its refusals not checked"; continue; }
      app="$bin/$other" expect_error 2 "$other does not take float16 (only scanlab-linrec does)" --dtype float16
      app="$bin/$other" expect_error 1 "float16 data: $other does not take it" -i "$tmp/h.npy"
      app="$bin/$other" expect_error 1 "2-byte void dtype" -i "$tmp/v2.npy"
    done
    "$gen" --dtype bfloat16 --n 4 -o "$tmp/gen.npy" -q > /dev/null 2> "$tmp/stderr"
    [[ $? == 2 ]] && grep -qF "scanlab-gen does not generate bfloat16" "$tmp/stderr" ||
      fail "scanlab-gen --dtype bfloat16: $(cat "$tmp/stderr")"
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
    # The element types: each one forward, reverse, final, backward, in both batch layouts,
    # channels-last and by offsets, outputs in the same type (bfloat16 as '<V2').
    declare -A descr_of=([float16]="<f2" [bfloat16]="<V2" [complex64]="<c8" [complex128]="<c16")
    for type in float16 bfloat16 complex64 complex128; do
      run "$type" --dtype $type --n $n --x0 0.5 -o "$tmp/x.npy"
      [[ $(npy_descr "$tmp/x.npy") == "${descr_of[$type]}" ]] || fail "$type: -o wrote $(npy_descr "$tmp/x.npy")"
      expect_shape "$tmp/x.npy" "($n,)"
      run "$type n=1" --dtype $type --n 1
      run "$type reverse" --dtype $type --n $n --reverse
      run "$type reverse final" --dtype $type --n 1000 --batch 64 --reverse --final -o "$tmp/x.npy"
      expect_shape "$tmp/x.npy" "(64,)"
      run "$type backward" --dtype $type --n $n --x0 0.25 --backward --grad-a "$tmp/da.npy" \
        --grad-x0 "$tmp/dx0.npy"
      [[ $(npy_descr "$tmp/da.npy") == "${descr_of[$type]}" ]] || fail "$type: --grad-a wrote $(npy_descr "$tmp/da.npy")"
      expect_shape "$tmp/da.npy" "($n,)"
      expect_shape "$tmp/dx0.npy" "(1,)"
      for layout in "" --interleaved; do
        run "$type backward batch $layout" --dtype $type --n 1000 --batch 64 $layout --backward
      done
      run "$type btc" --dtype $type "${btc[@]}" -o "$tmp/x.npy"
      expect_shape "$tmp/x.npy" "(4, 1000, 48)"
      run "$type btc reverse final" --dtype $type "${btc[@]}" --reverse --final
      run "$type btc backward" --dtype $type "${btc[@]}" --backward
      run "$type offsets" --dtype $type --offsets "$tmp/o64.npy" --x0 1
      run "$type offsets reverse" --dtype $type --offsets "$tmp/o32.npy" --reverse --final
      run "$type offsets backward" --dtype $type --offsets "$tmp/o64.npy" --backward
    done
    # bfloat16 read from '<V2' files (as ml_dtypes/JAX write them), written back so.
    write_npy "$tmp/ba.npy" "<V2" "(4,)" H 16256 49216 16128 0  # 1, -3, 0.5, 0
    write_npy "$tmp/bb.npy" "<V2" "(4,)" H 16128 16128 16256 49024  # 0.5, 0.5, 1, -1
    run "bfloat16 from <V2" -i "$tmp/ba.npy" -b "$tmp/bb.npy" --dtype bfloat16 -o "$tmp/x.npy"
    [[ $(npy_descr "$tmp/x.npy") == "<V2" ]] || fail "bfloat16: -o wrote $(npy_descr "$tmp/x.npy")"
    # x = 0.5, -1, 0.5, -1 (a[3] = 0 resets): bfloat16 0x3f00 0xbf80 0x3f00 0xbf80
    got=$(python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d[-8:].hex())' "$tmp/x.npy")
    [[ $got == "003f80bf003f80bf" ]] || fail "bfloat16 from <V2: x bytes $got"
    # float16 and complex from files; a float32 b converted to the type of a.
    write_npy "$tmp/ha.npy" "<f2" "(4,)" e 0.5 0.25 -1 2
    "$gen" --dist normal --dtype float32 --n 4 -o "$tmp/b4.npy" -q || fail "scanlab-gen"
    run "float16 from a file, b float32" -i "$tmp/ha.npy" -b "$tmp/b4.npy" --backward
    write_npy "$tmp/ca.npy" "<c16" "(3,)" d 0.5 0.5 0 0 -0.9 0.1
    "$gen" --dist normal --dtype float64 --n 3 -o "$tmp/b3.npy" -q || fail "scanlab-gen"
    run "complex128 from a file, b real" -i "$tmp/ca.npy" -b "$tmp/b3.npy" --backward
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
exit $status
