# Shared by the shell tests of the dataset apps (tests/reduce/reduce_app_test.sh,
# tests/scan/scan_app_test.sh). Source it after setting app (the executable under test) and
# gen (scanlab-gen); it makes $tmp (removed at exit) and $status (what the test exits with).
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
