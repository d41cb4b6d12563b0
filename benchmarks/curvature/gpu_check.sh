#!/usr/bin/env bash
# Everything the curvature family measures on a GPU machine, in one go (logs under OUTDIR):
#   bash benchmarks/curvature/gpu_check.sh OUTDIR [parts]
# parts (comma list, default all): tests, timing, eoc-mc, bench, eoc-willmore
set -uo pipefail
out=${1:?usage: gpu_check.sh OUTDIR [parts]}
parts=${2:-tests,eoc-mc,timing,bench,eoc-willmore}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if compgen -G ".wheels/*.whl" >/dev/null; then  # meshio etc. for the other families' imports
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/pdestudio-site .wheels/*.whl && export PYTHONPATH="$PYTHONPATH:/tmp/pdestudio-site"
fi
has() { [[ ",$parts," == *",$1,"* ]]; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
if has tests; then
  python3 -m pytest -m gpu -q -p no:cacheprovider tests/solvers/curvature \
    tests/solvers/test_contract.py tests/solvers/test_fused_matches_reference.py \
    -k "curvature or willmore" 2>&1 | tail -40 | tee "$out/pytest-gpu.log"
fi
if has timing; then
  timeout ${TIMING_S:-120} python3 -m benchmarks.curvature.timing --budget ${BUDGET_S:-30} \
    --parts ${TIMING_PARTS:-kernels,attempts,t_end} --json "$out/timing.json" 2>&1 | tee "$out/timing.log"
fi
if has eoc-mc; then
  for dt in float32 float64; do
    timeout 60 python3 -m benchmarks.curvature.eoc --backend cupy --dtype $dt \
      --sizes 16 32 64 128 256 512 1024 2>&1 | tee "$out/eoc-mc-$dt.log"
  done
fi
if has bench; then
  timeout ${BENCH_S:-150} python3 -m pdestudio bench mean-curvature --sizes 256 512 1024 \
    --backends ${BENCH_BACKENDS:-numpy,cupy} --quick --json "$out/bench-mc.json" 2>&1 | tee "$out/bench-mc.log"
  timeout ${BENCH_S:-150} python3 -m pdestudio bench willmore --sizes 128 256 --dtypes float64 \
    --backends ${BENCH_BACKENDS:-numpy,cupy} --quick --json "$out/bench-wm.json" 2>&1 | tee "$out/bench-wm.log"
fi
if has eoc-willmore; then
  timeout ${EOCW_S:-150} python3 -m benchmarks.curvature.eoc --model willmore --backend cupy \
    --sizes 16 32 64 128 256 2>&1 | tee "$out/eoc-willmore.log"
fi
