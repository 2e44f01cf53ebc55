"""Build the extension ck_kernels._ckfast for this interpreter into a directory and print its
path, for running the package from the source tree (developing ck: PYTHONPATH=python/src):

    export CK_KERNELS_EXT=$(python3 python/build_ext.py build/python)

`pip install ./python` builds it into the wheel instead. Needs a C compiler and Python's
headers; exits 1 with the reason otherwise (the package then runs its Python version)."""
import os
import subprocess
import sys
import sysconfig

out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/python")
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "ck_kernels", "_ckfast.c")
inc = sysconfig.get_paths()["include"]
if not os.path.exists(os.path.join(inc, "Python.h")):
    sys.exit(f"build_ext: no Python.h in {inc} (install the python3-dev package)")
os.makedirs(out, exist_ok=True)
target = os.path.join(out, "_ckfast" + sysconfig.get_config_var("EXT_SUFFIX"))
cc = os.environ.get("CC", "cc")
cmd = [cc, "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-I" + inc, src, "-o", target]
r = subprocess.run(cmd, capture_output=True, text=True)
if r.returncode:
    sys.exit(f"build_ext: {' '.join(cmd)} failed:\n{r.stderr}")
print(target)
