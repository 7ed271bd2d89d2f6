#!/usr/bin/env bash
# cko doctor end to end: no GPU is a warning (exit 0), --require-gpu makes it a blocker (exit 3),
# --json parses, and with the fake NVML the fake GPU's UUID and compute capability show.
. "$(dirname "$0")/lib.sh"

# Whatever this machine has, doctor without --require-gpu has no blocker and answers as JSON; the
# GPU source is the one this host offers, found here as cko looks for it: NVML when
# libnvidia-ml.so.1 loads and initialises, else nvidia-smi when it lists a GPU, else none.
expect_rc 0 "$CKO" doctor --json
printf '%s' "$out" | python3 -c '
import ctypes, json, os, subprocess, sys
def host_gpu_source():
    try:
        if ctypes.CDLL("libnvidia-ml.so.1").nvmlInit_v2() == 0:
            return "nvml"
    except OSError:
        pass
    dirs = [p for p in os.environ.get("PATH", "").split(":") if p.startswith("/")]
    dirs += [os.path.join(os.environ[v], "bin") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v, "").startswith("/")]
    for smi in [os.path.join(p, "nvidia-smi") for p in dirs + ["/usr/local/cuda/bin"]]:
        if os.access(smi, os.X_OK):
            p = subprocess.run([smi, "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True, text=True, timeout=60)
            return "nvidia-smi" if p.returncode == 0 and p.stdout.strip() else "none"
    return "none"
d=json.load(sys.stdin)
assert d["format_version"]=="cko/doctor-v1" and d["ready"] is True, d
ident=d["identity"]
assert ident["format_version"]=="cko/identity-v1", ident
want=host_gpu_source()
assert ident["gpu_source"]==want, (ident["gpu_source"], "expected", want, ident.get("notes"))
assert want!="none" or ident["gpus"]==[], ident["gpus"]'

# No GPU reachable (both sources pointed at nothing): a clean warning, CPU work still possible.
nogpu() { env CKO_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 CKO_NVIDIA_SMI=/nonexistent/nvidia-smi "$@"; }
expect_rc 0 nogpu "$CKO" doctor
contains "$out" "warn     gpu"
contains "$out" "no NVIDIA GPU"
contains "$out" "CPU workloads can still be measured"
contains "$out" "next step: ready"

expect_rc 0 nogpu "$CKO" doctor --json
printf '%s' "$out" | python3 -c '
import json,sys
d=json.load(sys.stdin)
items={i["name"]: i for i in d["items"]}
assert items["gpu"]["status"]=="warn", items["gpu"]
assert d["identity"]["gpu_source"]=="none" and d["identity"]["gpus"]==[], d["identity"]
assert d["counts"]["blocker"]==0, d["counts"]'

# --require-gpu: the same machine is blocked, exit 3, and the next step says what to do.
expect_rc 3 nogpu "$CKO" doctor --require-gpu
contains "$out" "blocker  gpu"
contains "$out" "next step: gpu: run on a host with an NVIDIA GPU"
echo '{"require_gpu": true, "json": true}' > "$tmp/req.json"
expect_rc 3 nogpu "$CKO" doctor --request "$tmp/req.json"
printf '%s' "$out" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["ready"] is False and d["counts"]["blocker"]>=1, d'

# A required tool that does not exist is a blocker too.
expect_rc 3 nogpu "$CKO" doctor --require-tool no-such-cuda-tool
contains "$out" "blocker  tool.no-such-cuda-tool"

# The fake NVML (built as fake_nvml beside the env layer; ctest passes its path).
fake=${FAKE_NVML_LIBRARY:-$(dirname "$CKO")/src/cko/env/libfake_nvml.so}
[ -f "$fake" ] || fail "fake NVML not found at $fake: build the fake_nvml target"
uuid=GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
cat > "$tmp/state" <<STATE
driver=570.86.15
cuda=12080
count=1
gpu0.uuid=$uuid
gpu0.name=NVIDIA H200
gpu0.cc=9.0
gpu0.mem_total=150754820096
gpu0.mem_free=150000000000
gpu0.sm_clock=345
gpu0.sm_clock_max=1980
gpu0.util=0
gpu0.persistence=1
gpu0.procs=31337:2147483648
STATE
withfake() { env CKO_NVML_LIBRARY="$fake" FAKE_NVML_STATE="$tmp/state" CKO_NVIDIA_SMI=/nonexistent/nvidia-smi "$@"; }
expect_rc 0 withfake "$CKO" doctor --require-gpu
contains "$out" "$uuid NVIDIA H200 (cc 9.0)"
contains "$out" "warn     gpu.0.processes"
contains "$out" "pid 31337 (2.0 GiB)"

expect_rc 0 withfake "$CKO" doctor --json
printf '%s' "$out" | UUID="$uuid" python3 -c '
import json,os,sys
d=json.load(sys.stdin)
ident=d["identity"]
assert ident["gpu_source"]=="nvml", ident
g=ident["gpus"][0]
assert g["uuid"]==os.environ["UUID"] and g["compute_capability"]=="9.0", g
assert g["power_w"] is None and g["ecc_enabled"] is None, g  # NOT_SUPPORTED in the fake: null
assert ident["driver_version"]=="570.86.15" and ident["cuda_driver_version"]=="12.8", ident
items={i["name"]: i for i in d["items"]}
assert items["gpu"]["status"]=="ok" and items["gpu.0.processes"]["status"]=="warn", items'

# The fake failing nvmlInit_v2 is reported as no GPU with NVML's reason.
echo "init=9" > "$tmp/state"
expect_rc 0 withfake "$CKO" doctor
contains "$out" "nvmlInit_v2 failed: Driver Not Loaded"
# --spec: the workload pieces of a Target spec; each missing one a blocker naming the field and fix.
ex="$(cd "$(dirname "$0")/../../examples/cpu-saxpy" && pwd)"
mkdir -p "$tmp/t/original" "$tmp/t/cases"
cp "$ex/original/saxpy.cpp" "$tmp/t/original/"; cp "$ex/cases/small.json" "$tmp/t/cases/"
sed -e 's/ids = \["small", "large"\]/ids = ["small", "huge"]/' "$ex/cko.toml" > "$tmp/t/cko.toml"
expect_rc 3 "$CKO" doctor --spec "$tmp/t/cko.toml" --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
items = {i["name"]: i for i in d["items"]}
assert items["spec.cases.ids"]["status"] == "blocker" and "huge.json" in items["spec.cases.ids"]["detail"], items
assert items["spec.driver.identity_paths[0]"]["status"] == "blocker", items   # driver.py is not in the copy
' || fail "doctor --spec did not name the missing pieces"
sed -i 's/direction = "lower"/direction = "sideways"/' "$tmp/t/cko.toml"
expect_rc 3 "$CKO" doctor --spec "$tmp/t/cko.toml"
contains "$out" "objective.primary.direction"
expect_rc 0 "$CKO" doctor --spec "$ex/cko.toml"
contains "$out" "cko target freeze --spec"
