#!/usr/bin/env bash
# Build the stand-alone one-folder app with PyInstaller and smoke-test it:
#   bash packaging/build.sh [DISTDIR]      (default build/dist; the app is DISTDIR/pdestudio/)
# Smoke test: the frozen binary runs a model headless and exits 0, refuses bad input with exit 2,
# and — when an X display (or xvfb-run) is available — opens the window, runs and saves a screenshot.
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:-build/dist}
python3 -m pip show pyinstaller >/dev/null 2>&1 || python3 -m pip install -q "pyinstaller>=6"
python3 -m PyInstaller --noconfirm --log-level WARN --distpath "$dist" --workpath build/pyi \
  packaging/pdestudio.spec
app="$dist/pdestudio/pdestudio"
tmp=$(mktemp -d)
"$app" run heat-1d --steps 10 --save "$tmp/s.npz" --quiet
test -s "$tmp/s.npz"
set +e
"$app" run nosuch --steps 1 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "unknown model" "$tmp/err"
for m in $("$app" run --help >/dev/null; python3 -c "from pdestudio import solvers; print(' '.join(solvers.available_models()))"); do
  "$app" run "$m" --steps 2 --quiet --backend numpy
done
if [ -z "${DISPLAY:-}" ] && command -v xvfb-run >/dev/null; then
  xvfb-run -a -s "-screen 0 1280x1024x24" "$app" --model heat-1d --run-for 2 --screenshot "$tmp/window.png"
elif [ -n "${DISPLAY:-}" ]; then
  "$app" --model heat-1d --run-for 2 --screenshot "$tmp/window.png"
fi
[ ! -e "$tmp/window.png" ] || test -s "$tmp/window.png"
du -sh "$dist/pdestudio"
echo "stand-alone build OK: $app"
