"""Runs megatron-core 0.19.2's own Megatron-LM training code (the wheel's megatron/training) on
one command line per case: parse_args -> validate_args -> set_global_variables (no tokenizer)
-> get_optimizer_param_scheduler (update_train_iters + OptimizerParamScheduler on a 1-parameter
SGD). Prints one JSON line per case. Environment facts patched: WORLD_SIZE/RANK in the environment, and
get_device_arch_version() = 9 (a Hopper GPU; there is no GPU here); the rules measured are not touched."""
import contextlib, io, json, os, sys, traceback

import torch

def run(case):
    os.environ.update(WORLD_SIZE=str(case["world"]), RANK="0", LOCAL_RANK="0",
                      CUDA_DEVICE_MAX_CONNECTIONS="1")
    import megatron.training.global_vars as gv
    import megatron.core.num_microbatches_calculator as nmc
    for name in ["_GLOBAL_ARGS", "_GLOBAL_TOKENIZER", "_GLOBAL_TENSORBOARD_WRITER",
                 "_GLOBAL_WANDB_WRITER", "_GLOBAL_ONE_LOGGER", "_GLOBAL_ADLR_AUTORESUME",
                 "_GLOBAL_TIMERS", "_GLOBAL_ENERGY_MONITOR", "_GLOBAL_SIGNAL_HANDLER"]:
        if hasattr(gv, name):
            setattr(gv, name, None)
    nmc._GLOBAL_NUM_MICROBATCHES_CALCULATOR = None
    from megatron.training.arguments import parse_args, validate_args
    import megatron.training.arguments as margs
    import megatron.training.utils.common_utils as cu
    # environment fact: a Hopper GPU (compute capability 9), as on the H100s the scripts target
    cu.get_device_arch_version = lambda: 9
    if hasattr(margs, "get_device_arch_version"):
        margs.get_device_arch_version = lambda: 9
    from megatron.training import training
    out = {"case": case["case"], "world": case["world"], "argv": case["argv"]}
    log = io.StringIO()
    sys.argv = ["pretrain_gpt.py"] + case["argv"]
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            args = parse_args()
            validate_args(args, {"tokenizer_type": "GPT2BPETokenizer"})
            out["global_batch_size"] = args.global_batch_size
            out["data_parallel_size"] = args.data_parallel_size
            gv.set_global_variables(args, build_tokenizer=False)
            calc = nmc._GLOBAL_NUM_MICROBATCHES_CALCULATOR
            out["calculator"] = type(calc).__name__
            out["num_microbatches"] = calc.get()
            out["current_global_batch_size"] = calc.get_current_global_batch_size()
            out["rampup_batch_size"] = args.rampup_batch_size
            p = torch.nn.Parameter(torch.zeros(1))
            opt = torch.optim.SGD([p], lr=args.lr)
            sched = training.get_optimizer_param_scheduler(opt)
            out["train_iters"] = args.train_iters
            out["lr_decay_iters"] = args.lr_decay_iters
            out["lr_decay_samples"] = args.lr_decay_samples
            out["lr_warmup_steps"] = sched.lr_warmup_steps
            out["lr_decay_steps"] = sched.lr_decay_steps
    except SystemExit as e:
        out["error"] = "SystemExit %s" % e.code
    except BaseException as e:
        if os.environ.get("TB"): traceback.print_exc(file=sys.__stderr__)
        tb = traceback.extract_tb(e.__traceback__)[-1]
        out["error"] = "%s: %s" % (type(e).__name__, e)
        out["where"] = "%s:%d" % (os.path.basename(tb.filename), tb.lineno)
    lines = [l for l in log.getvalue().splitlines()
             if " ...." not in l and any(k in l.lower() for k in ("error", "warn", "ramp", "unrecognized"))]
    out["log"] = lines[-6:]
    print(json.dumps(out), flush=True)

if __name__ == "__main__":
    for c in json.load(open(sys.argv[1])):
        run(c)
