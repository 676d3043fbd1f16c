"""Runs Megatron-LM's own argument code on each case of cases.json: parse_args (sys.argv = the
case's arguments) then validate_args, and prints one JSON line per case: `accepted`, or the
exception Megatron raised, verbatim, with where.

usage: python oracle.py cases.json
The Megatron it runs is the one `import megatron` finds (the venv's megatron-core, or a source
tree on PYTHONPATH); each line names its version and files. Patched, environment facts only: the
WORLD_SIZE/RANK environment of each case (parse_args reads them), and get_device_arch_version() = 9
(a Hopper GPU: there is no GPU here), as scripts/oracles/megatron-scheduler/oracle.py does.
Nothing of validate_args is touched.
"""
import contextlib
import io
import json
import os
import sys
import traceback
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")

import torch  # noqa: F401  (Megatron imports it; imported first as in its own scripts)

import megatron.core
import megatron.training.arguments as margs

try:
    from megatron.core.package_info import __version__ as VERSION
except ImportError:
    VERSION = "?"

if hasattr(margs, "get_device_arch_version"):
    margs.get_device_arch_version = lambda: 9
try:
    import megatron.training.utils.common_utils as cu

    cu.get_device_arch_version = lambda: 9
except ImportError:
    pass


def run(case):
    os.environ.update(WORLD_SIZE=str(case["world"]), RANK="0", LOCAL_RANK="0")
    sys.argv = ["pretrain_gpt.py"] + case["argv"]
    out = {"case": case["case"], "megatron": VERSION}
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            args = margs.parse_args()
            margs.validate_args(args, {"tokenizer_type": "NullTokenizer"})
        out["accepted"] = True
        out["num_experts"] = args.num_experts
        out["expert_model_parallel_size"] = args.expert_model_parallel_size
        out["expert_tensor_parallel_size"] = args.expert_tensor_parallel_size
        out["data_parallel_size"] = args.data_parallel_size
    except SystemExit as e:  # argparse
        out["error"] = "SystemExit %s" % e.code
        out["log"] = log.getvalue().strip().splitlines()[-2:]
    except BaseException as e:  # Megatron's refusal
        tb = traceback.extract_tb(e.__traceback__)[-1]
        out["error"] = "%s: %s" % (type(e).__name__, e)
        where = tb.filename[tb.filename.rfind("megatron/"):]
        out["where"] = "%s:%d %s" % (where, tb.lineno, tb.name)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    print(json.dumps({"megatron": VERSION, "core": megatron.core.__file__,
                      "training": margs.__file__}), flush=True)
    for c in json.load(open(sys.argv[1])):
        run(c)
