# axolotl 0.21.0's own config validation on a YAML, CPU, world size from the environment.
# Prints what validate_config leaves of the FSDP keys, or the exception it raises.
import sys, os, json, yaml
from axolotl.utils.dict import DictDefault
from axolotl.utils.config import validate_config
path = sys.argv[1]
with open(path) as f:
    raw = yaml.safe_load(f)
try:
    cfg = validate_config(DictDefault(raw))
except Exception as e:  # the refusal, verbatim
    print("RAISED", type(e).__name__, str(e)[:2000])
    sys.exit(0)
keys = ["fsdp", "fsdp_version", "fsdp_config", "dp_shard_size", "dp_replicate_size", "context_parallel_size", "deepspeed"]
out = {}
for k in keys:
    v = cfg.get(k)
    try:
        v = v.model_dump() if hasattr(v, "model_dump") else (dict(v) if isinstance(v, dict) else v)
    except Exception:
        v = repr(v)
    out[k] = v
print(json.dumps(out, default=repr, indent=1))
