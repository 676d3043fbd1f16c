"""results.jsonl (oracle.py) -> records of tests/fixtures/megatron.txt (command megatron19-27)."""
import json, sys
from urllib.parse import quote
KEYS = ["tensor_model_parallel_size", "pipeline_model_parallel_size", "micro_batch_size",
        "global_batch_size", "rampup_batch_size", "step_batch_size_schedule", "train_iters",
        "train_samples", "seq_length", "lr_decay_iters", "lr_decay_samples", "lr_warmup_iters",
        "lr_warmup_fraction", "lr_warmup_samples"]
SKIP = {"script_train_gpt3_175b_distributed", "script_train_gpt3_175b_distributed_args",
        "script_train_llama3_8b_h100_fp8"}  # argparse outcomes and the import: tests/real_configs_megatron.rs
def val(v):
    return ("float:" + repr(v)) if isinstance(v, float) else ("int:%d" % v)
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["case"] in SKIP:
        continue
    args, k, argv = {}, 0, d["argv"]
    while k < len(argv):
        key = argv[k][2:].replace("-", "_")
        vals = []
        k += 1
        while k < len(argv) and not argv[k].startswith("--"):
            vals.append(argv[k]); k += 1
        if key in KEYS:
            args[key] = " ".join(vals)
    link = "framework=megatron&version=0.19.2&world_size=%d&" % d["world"] + "&".join(
        "%s=%s" % (key, quote(args[key], safe=".")) for key in KEYS if key in args)
    schedule = d.get("calculator") == "StepBatchsizeNumMicroBatchesCalculator"
    outs = []
    if "data_parallel_size" in d:
        outs += ["world_size=int:%d" % d["world"], "dp_world_size=int:%d" % d["data_parallel_size"]]
    if "global_batch_size" in d and "error" not in d:
        outs.append("global_batch_size=" + val(d["global_batch_size"]))
        outs.append(("~first_num_microbatches=" if schedule else "num_microbatches=") + val(d["num_microbatches"]))
    if "train_iters" in d:
        outs += ["train_iters=" + val(d["train_iters"]), "max_steps=" + val(d["train_iters"]),
                 "lr_warmup_steps=" + val(d["lr_warmup_steps"]), "~lr_decay_steps=" + val(d["lr_decay_steps"])]
    if d.get("rampup_batch_size"):
        outs += ["initial_global_batch_size=none"]  # d["calculator"]: ConstantNumMicroBatchesCalculator
    if "error" in d:
        e = d["error"]
        outcome = "error: AssertionError" if e.strip() == "AssertionError:" else "error: " + e
    else:
        outcome = "ok"
    print("megatron 0.19.2 megatron19-27 %s | %s | %s | %s" % (d["case"], link, " ".join(outs) or "-", outcome))
