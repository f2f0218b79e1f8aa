#!/usr/bin/env bash
# Extracts the real datasets that data/README.md describes from Debian packages into
# data/cache/ (ignored by git), converting some of them to .npy for the apps.
#
# How: `apt-get download PKG` fetches the package's .deb (no root needed, but the apt
# index must exist: run `apt-get update` once as root), `dpkg-deb -x` unpacks it into a
# temporary folder, and only the wanted files are kept. Where the package is already
# installed, its files are read from the system instead (same bytes, no network).
#
# Each dataset is independent: a missing package is reported on its line and the others
# still run. Files are written into a staging folder and renamed into place, and a
# dataset counts as done only once its stamp (.NAME.done, which lists its files) is
# written last: an interrupted run leaves nothing that looks complete. A dataset whose
# stamp and files are all present is skipped (--force redoes it).
#
# Usage: data/fetch.sh [--force] [--download] [--out DIR] [--list] [NAME...]
# Exit status: 0 all requested datasets present, 1 one or more failed, 2 bad usage.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="$here/../scripts/python.sh"

# name | Debian package | files inside the package (globs allowed) | what it is
datasets=(
  "ecg|python3-scipy|usr/lib/python3/dist-packages/scipy/misc/ecg.dat|5 min ECG, 360 Hz (108000 samples)"
  "sounds|alsa-utils|usr/share/sounds/alsa/*.wav|ALSA test sounds: 9 mono 16-bit 48 kHz WAVs"
  "timeseries|python3-statsmodels|usr/lib/python3/dist-packages/statsmodels/datasets/co2/co2.csv usr/lib/python3/dist-packages/statsmodels/datasets/sunspots/sunspots.csv usr/lib/python3/dist-packages/statsmodels/datasets/nile/nile.csv usr/lib/python3/dist-packages/statsmodels/datasets/elnino/elnino.csv usr/lib/python3/dist-packages/statsmodels/datasets/macrodata/macrodata.csv|time series: CO2, sunspots, Nile, El Nino, US macro"
  "matrices|r-cran-matrix|usr/lib/R/library/Matrix/external/lund_a.mtx usr/lib/R/library/Matrix/external/pores_1.mtx|Matrix Market: lund_a (SPD 147x147), pores_1 (general 30x30)"
)

usage() {
  cat <<'EOF'
Usage: data/fetch.sh [--force] [--download] [--out DIR] [--list] [NAME...]

Extracts real datasets from Debian packages into data/cache/ (see data/README.md).
With no NAME, every dataset; otherwise only those named.

  --force     redo datasets that are already present
  --download  always `apt-get download` the package, even when it is installed
  --out DIR   write into DIR instead of data/cache
  --list      print the datasets and their packages, then exit
  -h, --help  this text
EOF
}

force=0
download=0
out="$here/cache"
wanted=()
while (($#)); do
  case "$1" in
    --force) force=1 ;;
    --download) download=1 ;;
    --out)
      [[ $# -ge 2 ]] || { echo "fetch.sh: --out needs a folder" >&2; exit 2; }
      out="$2"; shift ;;
    --list)
      for d in "${datasets[@]}"; do
        IFS='|' read -r name pkg _ what <<<"$d"
        printf '%-11s %-20s %s\n' "$name" "$pkg" "$what"
      done
      exit 0 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fetch.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) wanted+=("$1") ;;
  esac
  shift
done

known=" $(for d in "${datasets[@]}"; do printf '%s ' "${d%%|*}"; done)"
for w in "${wanted[@]}"; do
  [[ $known == *" $w "* ]] || { echo "fetch.sh: no dataset named '$w' (known:$known)" >&2; exit 2; }
done

if ! "$python" -c '' 2>/dev/null; then
  echo "fetch.sh: no python3 with numpy found (run scripts/install-deps.sh)" >&2
  exit 1
fi
mkdir -p "$out" || { echo "fetch.sh: cannot create $out" >&2; exit 1; }
out="$(cd "$out" && pwd)"

# Converts or copies the files found under $1 (an unpacked package or /) into $2 (the
# staging folder) for dataset $3, and prints the names it wrote, one a line.
convert() {
  "$python" - "$@" <<'PY'
import csv, os, shutil, sys, wave
import numpy as np

src, dst, name = sys.argv[1:4]
written = []

def save_npy(rel, array):
    path = os.path.join(dst, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, array, allow_pickle=False)
    written.append(rel)

def copy(src_rel, rel):
    path = os.path.join(dst, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shutil.copyfile(os.path.join(src, src_rel), path)
    written.append(rel)

def column(path, name):
    with open(path, newline="") as f:
        return [row[name] for row in csv.DictReader(f)]

if name == "ecg":
    # An .npz (zip) holding one uint16 array "ecg": raw ADC counts. SciPy's own loader
    # turns them into millivolts as (counts - 1024) / 200; we keep both.
    with np.load(os.path.join(src, "usr/lib/python3/dist-packages/scipy/misc/ecg.dat")) as z:
        counts = z["ecg"]
    save_npy("ecg_adc.npy", counts.astype(np.uint16))
    save_npy("ecg.npy", ((counts.astype(np.float64) - 1024.0) / 200.0).astype(np.float32))

elif name == "sounds":
    folder = os.path.join(src, "usr/share/sounds/alsa")
    parts = []
    for wav in sorted(f for f in os.listdir(folder) if f.endswith(".wav")):
        with wave.open(os.path.join(folder, wav), "rb") as w:
            width, channels, frames = w.getsampwidth(), w.getnchannels(), w.getnframes()
            raw = w.readframes(frames)
        if width == 1:      # 8-bit WAV is unsigned
            x = (np.frombuffer(raw, np.uint8).astype(np.float64) - 128.0) / 128.0
        elif width == 2:
            x = np.frombuffer(raw, "<i2").astype(np.float64) / 32768.0
        elif width == 4:
            x = np.frombuffer(raw, "<i4").astype(np.float64) / 2147483648.0
        else:
            sys.exit(f"{wav}: {8 * width}-bit samples are not supported")
        x = x.reshape(-1, channels).mean(axis=1)  # several channels: their mean
        x = x.astype(np.float32)
        save_npy("sounds/" + wav[:-4] + ".npy", x)
        parts.append(x)
    save_npy("sounds.npy", np.concatenate(parts))

elif name == "timeseries":
    base = "usr/lib/python3/dist-packages/statsmodels/datasets/"
    for rel in ("co2/co2.csv", "sunspots/sunspots.csv", "nile/nile.csv",
                "elnino/elnino.csv", "macrodata/macrodata.csv"):
        copy(base + rel, "timeseries/" + os.path.basename(rel))
    # co2: weekly ppm with empty weeks; the .npy fills them by linear interpolation
    # between the neighbouring weeks so the series stays evenly spaced.
    v = np.array([float(s) if s.strip() else np.nan
                  for s in column(os.path.join(src, base + "co2/co2.csv"), "co2")])
    gap = np.isnan(v)
    v[gap] = np.interp(np.flatnonzero(gap), np.flatnonzero(~gap), v[~gap])
    save_npy("co2.npy", v.astype(np.float32))
    save_npy("sunspots.npy", np.array(
        column(os.path.join(src, base + "sunspots/sunspots.csv"), "SUNACTIVITY"), np.float32))
    save_npy("nile.npy", np.array(
        column(os.path.join(src, base + "nile/nile.csv"), "volume"), np.float32))
    # elnino: one row per year, one column per month: flattened to a monthly series.
    with open(os.path.join(src, base + "elnino/elnino.csv"), newline="") as f:
        rows = list(csv.reader(f))[1:]
    save_npy("elnino.npy", np.array([float(c) for r in rows for c in r[1:13]], np.float32))

elif name == "matrices":
    for m in ("lund_a", "pores_1"):
        copy(f"usr/lib/R/library/Matrix/external/{m}.mtx", f"matrices/{m}.mtx")

else:
    sys.exit(f"no converter for {name}")

print("\n".join(written))
PY
}

# One line for a dataset that could not be made; the loop goes on with the next one.
fail() {
  printf '%-11s FAILED      %s\n' "$name" "$1"
  failed=1
  rm -rf "$work"
}

failed=0
for d in "${datasets[@]}"; do
  IFS='|' read -r name pkg files _ <<<"$d"
  if ((${#wanted[@]})) && [[ " ${wanted[*]} " != *" $name "* ]]; then continue; fi
  stamp="$out/.$name.done"

  # Up to date: the stamp exists and every file it lists is there.
  if ((!force)) && [[ -f $stamp ]]; then
    complete=1
    while IFS= read -r f; do
      [[ -z $f || $f == \#* ]] && continue
      [[ -f $out/$f ]] || complete=0
    done <"$stamp"
    if ((complete)); then
      printf '%-11s up to date  %s\n' "$name" "$(sed -n 's/^# from //p' "$stamp")"
      continue
    fi
  fi

  work="$(mktemp -d)"
  # apt-get download drops root to the _apt user, which must be able to write here.
  chmod 755 "$work"

  # Where the files come from: the installed package, or its downloaded .deb.
  root=""
  if ((!download)) && dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    root="/"
    for pattern in $files; do
      compgen -G "/$pattern" >/dev/null || root=""   # installed but a file was removed
    done
    [[ -n $root ]] && origin="$pkg $(dpkg-query -W -f='${Version}' "$pkg"), installed"
  fi
  if [[ -z $root ]]; then
    if ! (cd "$work" && apt-get download -q "$pkg") >"$work/apt.log" 2>&1; then
      why="$(grep -E '^E:' "$work/apt.log" | head -n 1)"
      [[ -z $why ]] && why="$(tail -n 1 "$work/apt.log")"
      hint=""
      grep -q 'Unable to locate package' "$work/apt.log" && hint=" (no such package in the apt index; run 'apt-get update' as root)"
      fail "apt-get download $pkg: ${why:-failed}$hint"
      continue
    fi
    deb="$(compgen -G "$work/${pkg}_*.deb" | head -n 1)"
    if [[ -z $deb ]] || ! dpkg-deb -x "$deb" "$work/root" 2>"$work/dpkg.log"; then
      fail "dpkg-deb -x $pkg: $(head -n 1 "$work/dpkg.log" 2>/dev/null)"
      continue
    fi
    root="$work/root"
    origin="$pkg $(dpkg-deb -f "$deb" Version), downloaded"
    missing=""
    for pattern in $files; do
      compgen -G "$root/$pattern" >/dev/null || missing+=" $pattern"
    done
    if [[ -n $missing ]]; then
      fail "$pkg does not ship:$missing"
      continue
    fi
  fi

  # Convert into a staging folder beside the outputs (same file system: renames are atomic).
  stage="$(mktemp -d "$out/.staging-$name.XXXXXX")"
  if ! convert "$root" "$stage" "$name" >"$work/written" 2>"$work/convert.log"; then
    rm -rf "$stage"
    fail "converting: $(tail -n 1 "$work/convert.log")"
    continue
  fi
  # The package's copyright file travels with the data (the licences ask for it).
  if [[ -f $root/usr/share/doc/$pkg/copyright ]]; then
    cp "$root/usr/share/doc/$pkg/copyright" "$stage/$name.copyright" && echo "$name.copyright" >>"$work/written"
  fi

  rm -f "$stamp"
  ok=1
  while IFS= read -r f; do
    [[ -z $f ]] && continue
    mkdir -p "$(dirname "$out/$f")" && mv -f "$stage/$f" "$out/$f" || ok=0
  done <"$work/written"
  rm -rf "$stage"
  if ((!ok)); then
    fail "could not move the files into $out"
    continue
  fi
  { echo "# from $origin"; cat "$work/written"; } >"$stamp.tmp" && mv -f "$stamp.tmp" "$stamp"
  # The line names the top-level files (a folder's files are counted as one entry).
  summary="$(grep -v '\.copyright$' "$work/written" | sed 's|/.*|/|' | uniq -c |
             awk '{ printf "%s%s", sep, ($1 > 1 ? $2 " (" $1 " files)" : $2); sep = ", " }')"
  printf '%-11s ok          %s/: %s (%s)\n' "$name" "$out" "$summary" "$origin"
  rm -rf "$work"
done
exit "$failed"
