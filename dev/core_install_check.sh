#!/usr/bin/env bash
# A core-only install (`pip install .`, no extras) on another Python: what README's "Install
# without make" claims. Usage: bash dev/core_install_check.sh PYTHON [VENV_DIR]
#   bash dev/core_install_check.sh /root/.pyenv/versions/3.10.13/bin/python /tmp/core310
# Prints the versions, then one line per command: [exit status] command :: last output line.
# The core commands should exit 0; the others 2 with "this command needs ... (pip install ...)".
set -u
py=${1:?usage: core_install_check.sh PYTHON [VENV_DIR]}
venv=${2:-$(mktemp -d)/venv}
repo=$(cd "$(dirname "$0")/.." && pwd)
"$py" -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "$repo" \
  2>&1 | grep -v "^WARNING: Location" || true
"$venv/bin/python" -c "import sys, numpy, numba, scipy; print(sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, 'scipy', scipy.__version__)"
work=$(mktemp -d) && cd "$work" && ln -s "$repo/examples" examples
for c in "solve tdcr3 --tensions 1,0,0,0,0,0,0,0,0 --json" "info tdcr3" \
  "plot tdcr3 --tensions 2,0,0,0,1,0,0,0,0 --compare-pcc -o shape.png" \
  "simulate tpu_rod --duration 0.05" "track circle --loops 0.05 --json" \
  "workspace tdcr3 --samples 50 -o ws.png" "demo --quick -o demo" \
  "mjcf tdcr3" "render tdcr3 -o r.png" "train Reach-v0 --steps 10" "eval shipped:Reach-v0" \
  "demos WholeBodyGrasp-v0 --out d.npz" "bc d.npz --out p" "plan examples/planning/env1.yaml" \
  "sweep examples/sweeps/static_grid.yaml -o g.parquet" "bench mujoco" "bench envs" \
  "bench planning" "bench sweep --n 10" "bench web --n 10"; do
  out=$(timeout 300 "$venv/bin/softrod" $c 2>&1)
  echo "[$?] softrod $c :: $(echo "$out" | tail -1 | cut -c1-120)"
done
# The README's Python example.
sed -n '/^```python/,/^```/p' "$repo/README.md" | sed '1d;$d' > readme.py
"$venv/bin/python" readme.py > readme.out 2>&1; echo "[$?] README python :: $(tail -1 readme.out)"
