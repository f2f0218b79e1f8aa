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
