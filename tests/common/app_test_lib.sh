# Shared by the shell tests of the dataset apps (tests/reduce/reduce_app_test.sh,
# tests/scan/scan_app_test.sh). Source it after setting app (the executable under test) and
# gen (scanlab-gen); it makes $tmp (removed at exit) and $status (what the test exits with).
# The .npy helpers use python3's standard library only (no NumPy).
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# expect_error EXIT_CODE TEXT ARGS...: the run exits EXIT_CODE with TEXT in its one line.
expect_error() {
  local code=$1 text=$2; shift 2
  "$app" "$@" -o "$tmp/out.npy" > "$tmp/stdout" 2> "$tmp/stderr"
  local rc=$?
  [[ $rc == "$code" ]] || fail "$* exited $rc, expected $code: $(cat "$tmp/stderr")"
  grep -qF -- "$text" "$tmp/stderr" || fail "$*: '$text' not in: $(cat "$tmp/stderr")"
  [[ ! -e "$tmp/out.npy" ]] || fail "$*: wrote $tmp/out.npy"
  no_temp_files "$*"
}

# no_temp_files LABEL: no temporary output (.NAME.tmp.PID.RANDOM, atomic_file.hpp) left in $tmp.
no_temp_files() {
  local left
  left=$(find "$tmp" -maxdepth 1 -name '.*.tmp.*' -printf '%f ')
  [[ -z $left ]] || fail "$1: left temporary files: $left"
}

# list NAME "A B C": a text file of integers (read as int64), one per line; prints its path.
list() { printf '%s\n' $2 > "$tmp/$1.txt"; echo "$tmp/$1.txt"; }

# Exits 77 (skipped) where the app finds no usable GPU (exit 3 on a small input).
skip_without_gpu() {
  "$gen" --dist uniform --dtype int32 --n 10 -o "$tmp/probe.npy" -q || fail "scanlab-gen"
  "$app" -i "$tmp/probe.npy" -q > /dev/null 2>&1
  [[ $? == 3 ]] && { echo "SKIP: no usable GPU"; exit 77; }
  return 0
}

# .npy files without NumPy (python3's standard library): 1-D integer arrays, written and read.
npy_py='
import array, ast, random, sys
codes = {"|u1": "B", "|i1": "b", "<u2": "H", "<i2": "h", "<u4": "I", "<i4": "i", "<u8": "Q", "<i8": "q"}
def read(path):
    data = open(path, "rb").read()
    start = 10 if data[6] == 1 else 12
    length = int.from_bytes(data[8:start], "little")
    return ast.literal_eval(data[start:start + length].decode()), data[start + length:]
what, path = sys.argv[1], sys.argv[2]
if what == "length":
    print(read(path)[0]["shape"][0])
elif what == "values":
    header, body = read(path)
    sys.stdout.write("".join("%d\n" % v for v in array.array(codes[header["descr"]], body)))
else:  # keys N RUN DESCR STEP
    n, run, descr, step = int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], int(sys.argv[6])
    bits, signed, q = 8 * int(descr[2]), descr[1] == "i", chr(39)  # q: the quote NumPy writes
    rng, k, keys = random.Random(7), 0, array.array(codes[descr])
    for i in range(n):
        k += rng.random() < 1 / run
        v = (k * step) % (1 << bits)
        keys.append(v - (1 << bits) if signed and v >= 1 << (bits - 1) else v)
    header = "{%sdescr%s: %s%s%s, %sfortran_order%s: False, %sshape%s: (%d,), }" % (q, q, q, descr, q, q, q, q, q, n)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + keys.tobytes())
'

# run_keys NAME N RUN [DESCR [STEP]]: N keys (.npy) in runs whose lengths average RUN
# (seeded); run r holds r * STEP (default 1), wrapped into DESCR (default '<i8': int64; e.g.
# '|u1' for uint8, '<u8' with STEP 2^32 for uint64 keys whose low 32 bits never change).
# Prints its path.
run_keys() {
  python3 -c "$npy_py" keys "$tmp/$1.npy" "$2" "$3" "${4:-<i8}" "${5:-1}" || fail "run_keys $*"
  echo "$tmp/$1.npy"
}

# npy_length FILE: the length of a 1-D .npy file's array (from its header).
npy_length() { python3 -c "$npy_py" length "$1"; }

# npy_values FILE: the values of a 1-D integer .npy file, one per line.
npy_values() { python3 -c "$npy_py" values "$1"; }

# npy_close A B: two 1-D .npy files of one dtype hold the same values: integers bit for bit,
# floats within 1e-4 of the largest magnitude in A (NaN only where NaN, infinities equal).
# Prints what differs and returns 1 otherwise.
npy_close() {
  python3 - "$1" "$2" <<'PY'
import array, ast, math, sys
def read(path):
    data = open(path, "rb").read()
    start = 10 if data[6] == 1 else 12
    length = int.from_bytes(data[8:start], "little")
    header = ast.literal_eval(data[start:start + length].decode())
    codes = {"|u1": "B", "|i1": "b", "<u2": "H", "<i2": "h", "<u4": "I", "<i4": "i", "<u8": "Q", "<i8": "q",
             "<f4": "f", "<f8": "d"}
    return header, array.array(codes[header["descr"]], data[start + length:])
(ha, a), (hb, b) = read(sys.argv[1]), read(sys.argv[2])
if ha != hb:
    sys.exit("headers differ: %s, %s" % (ha, hb))
if ha["descr"][1] != "f":
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            sys.exit("item %d: %d, %d" % (i, x, y))
    sys.exit(0)
finite = [abs(x) for x in a if math.isfinite(x)]
scale = max(finite, default=0.0) + 1e-30
for i, (x, y) in enumerate(zip(a, b)):
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        if not (math.isnan(x) and math.isnan(y)) and x != y:
            sys.exit("item %d: %r, %r" % (i, x, y))
    elif abs(x - y) > 1e-4 * scale:
        sys.exit("item %d: %r, %r (scale %r)" % (i, x, y, scale))
PY
}

# ---- The streaming path (issue #24: --device-memory; inputs larger than GPU memory) ----

# stream_input_errors ARGS...: the input faults, each asking for the streaming path
# (--device-memory 64K, ARGS added: an app's own options): a missing path, a directory, an
# unreadable file (as a user other than root, who reads anything), a truncated .npy, a .npy
# with a bad header, a raw file that is not a whole number of elements, bad --device-memory
# and --stream-slice sizes (where the app has --stream-slice: scanlab-sort does not): one clear
# line, exit 1 or 2, nothing under -o, no temporary file left, the input unchanged. All are
# found before a GPU is looked for: runs everywhere.
stream_input_errors() {
  local sm="--device-memory 64K"
  "$gen" --dist uniform --dtype int32 --n 1000 -o "$tmp/good.npy" -q || fail "scanlab-gen"
  head -c -10 "$tmp/good.npy" > "$tmp/trunc.npy"
  local before
  before=$(sha256sum < "$tmp/trunc.npy")
  expect_error 1 "trunc.npy: truncated data: shape (1000,) of <i4 needs 4000 bytes, file has 3990" \
    -i "$tmp/trunc.npy" $sm "$@"
  [[ $(sha256sum < "$tmp/trunc.npy") == "$before" ]] || fail "the truncated input changed"
  expect_error 2 "does not exist" -i "$tmp/missing.npy" $sm "$@"
  mkdir -p "$tmp/dir.npy"
  expect_error 2 "directory" -i "$tmp/dir.npy" $sm "$@"
  printf '\x93NUMPY\x01\x00\x10\x00{"descr": 1}   \n' > "$tmp/bad.npy"
  expect_error 1 "bad.npy: header is not a valid dict" -i "$tmp/bad.npy" $sm "$@"
  printf 'abcdefg' > "$tmp/odd.bin"
  expect_error 1 "odd.bin: raw binary of 7 bytes is not a whole number of int32 elements" \
    -i "$tmp/odd.bin" --dtype int32 $sm "$@"
  if [[ $(id -u) != 0 ]]; then
    cp "$tmp/good.npy" "$tmp/locked.npy" && chmod 000 "$tmp/locked.npy"
    expect_error 1 "locked.npy: cannot open: Permission denied" -i "$tmp/locked.npy" $sm "$@"
    chmod 600 "$tmp/locked.npy"
  fi
  expect_error 2 "'4X' is not a size in bytes" -i "$tmp/good.npy" --device-memory 4X "$@"
  expect_error 2 "--device-memory: 1000 is too small: at least 16K" -i "$tmp/good.npy" --device-memory 1000 "$@"
  if grep -q -- --stream-slice <<< "$("$app" --help)"; then
    expect_error 2 "'0.5' is not a size in bytes" -i "$tmp/good.npy" $sm --stream-slice 0.5 "$@"
  fi
}

# stream_matches LABEL ARGS...: the streaming path (--device-memory 64K and slices of 40000
# bytes: many chunks per slice, many slices, so the running value crosses both) writes under -o
# what the in-memory path writes (npy_close: integers bit for bit, floats within a tolerance),
# its --validate against the CPU reference passes, its report says it streamed, and no
# temporary file is left. Needs a GPU.
stream_matches() {
  local label=$1; shift
  "$app" "$@" -q -o "$tmp/mem.npy" > "$tmp/stdout" 2>&1 || { fail "$label, in memory: $(tail -3 "$tmp/stdout")"; return; }
  "$app" "$@" --device-memory 64K --stream-slice 40000 --validate -q -o "$tmp/str.npy" --json "$tmp/str.json" \
    > "$tmp/stdout" 2>&1 || { fail "$label, streamed: $(tail -4 "$tmp/stdout")"; return; }
  grep -q "pass" "$tmp/stdout" || fail "$label, streamed: no check passed: $(cat "$tmp/stdout")"
  grep -q '"streaming"' "$tmp/str.json" || fail "$label: the report has no streaming object"
  npy_close "$tmp/mem.npy" "$tmp/str.npy" || fail "$label: the streamed output differs from the in-memory one"
  no_temp_files "$label"
  rm -f "$tmp/mem.npy" "$tmp/str.npy" "$tmp/str.json"
}

# stream_sweep VARIANT...: stream_matches for every VARIANT (a quoted set of app options) on
# normal data of every dtype in $DTYPES (default: uint8 int16 int32 uint64 int64 float32
# float64) and every n in 0, 1, 4097 (one item past 2^12) and 300007. Needs a GPU.
stream_sweep() {
  local dtype n variant
  for dtype in ${DTYPES:-uint8 int16 int32 uint64 int64 float32 float64}; do
    for n in 0 1 4097 300007; do
      "$gen" --dist normal --dtype $dtype --n $n -o "$tmp/x.npy" -q || fail "scanlab-gen"
      for variant in "$@"; do
        # shellcheck disable=SC2086  # a variant is several options
        stream_matches "$dtype n=$n $variant" -i "$tmp/x.npy" $variant
      done
    done
  done
}

# stream_full_disk ARGS...: a full disk while the output is streamed, simulated without root
# by a file size limit (ulimit -f, with SIGXFSZ ignored so that write() fails with EFBIG as it
# fails with ENOSPC on a full disk): one clear line, exit 1, the file under the output's name
# as it was before, no temporary file left, the input unchanged. ARGS: the input and the app's
# options; the output must be larger than 256 KiB. Needs a GPU.
stream_full_disk() {
  printf 'before\n' > "$tmp/full.npy"
  local input_sum
  input_sum=$(sha256sum "$2" | cut -d' ' -f1)
  ( trap '' XFSZ; ulimit -f 256; exec "$app" "$@" --device-memory 64K -q -o "$tmp/full.npy" ) \
    > "$tmp/stdout" 2> "$tmp/stderr"
  local rc=$?
  [[ $rc == 1 ]] || fail "full disk: $* exited $rc, expected 1: $(cat "$tmp/stderr")"
  grep -qF "full.npy: write failed: File too large" "$tmp/stderr" ||
    fail "full disk: $*: no clear error: $(cat "$tmp/stderr")"
  [[ $(wc -l < "$tmp/stderr") == 1 ]] || fail "full disk: $*: more than one line: $(cat "$tmp/stderr")"
  [[ $(cat "$tmp/full.npy") == before ]] || fail "full disk: $*: the file under the output name changed"
  [[ $(sha256sum "$2" | cut -d' ' -f1) == "$input_sum" ]] || fail "full disk: $*: the input changed"
  no_temp_files "full disk: $*"
}
