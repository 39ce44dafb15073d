#!/bin/sh
# usage: skip_without_numpy.sh PYTHON COMMAND [ARGS...]
# Runs COMMAND when PYTHON can import numpy; otherwise says why and exits 77,
# which CTest reports as "Skipped" (SKIP_RETURN_CODE), never as a silent pass.
python=$1
shift
if [ ! -x "$python" ]; then
  echo "SKIPPED: $python not found; the NumPy dump checks need Debian's python3 (apt-get install python3-numpy)"
  exit 77
fi
if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "SKIPPED: numpy is not importable by $python (apt-get install python3-numpy)"
  exit 77
fi
exec "$@"
