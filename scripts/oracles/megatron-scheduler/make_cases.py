"""The cases for Megatron's decay lengths (--lr-decay-iters/--lr-decay-samples), the ramp-up 0.19.2 ignores and the two example scripts."""
import json, shlex
M = "--num-layers 24 --hidden-size 64 --num-attention-heads 8 --seq-length 128 --max-position-embeddings 128 --lr 0.0001 "
B = M + "--micro-batch-size 1 --global-batch-size 16 "   # world 8: dp 8, 2 microbatches
cases = [
  # decay lengths: iteration-based
  ("it_frac_decay_iters", 8, B + "--train-iters 100 --lr-warmup-fraction .01 --lr-decay-iters 50"),
  ("it_warmup_iters_decay_iters", 8, B + "--train-iters 100 --lr-warmup-iters 10 --lr-decay-iters 50"),
  ("it_decay_iters_above_train", 8, B + "--train-iters 100 --lr-warmup-iters 10 --lr-decay-iters 400"),
  ("it_warmup_not_below_decay", 8, B + "--train-iters 100 --lr-warmup-iters 50 --lr-decay-iters 50"),
  ("it_decay_iters_0", 8, B + "--train-iters 100 --lr-decay-iters 0"),
  ("it_decay_samples", 8, B + "--train-iters 100 --lr-decay-samples 800"),
  ("it_frac_no_decay", 8, B + "--train-iters 100 --lr-warmup-fraction .01"),
  # the 175B script's numbers on 128 GPUs (16 x 8), its own model flags
  ("gpt3_175b_128gpus", 128, "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 --max-position-embeddings 2048 --lr 6.0e-5 "
     "--micro-batch-size 1 --global-batch-size 1536 --train-iters 500000 --lr-warmup-fraction .001 --lr-decay-iters 430000 "
     "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16"),
  # --rampup-batch-size at 0.19.2 (the older script's value), iteration- and sample-based
  ("gpt3_175b_128gpus_rampup", 128, "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 --max-position-embeddings 2048 --lr 6.0e-5 "
     "--micro-batch-size 1 --global-batch-size 1536 --rampup-batch-size 16 16 5859375 --train-iters 500000 --lr-warmup-fraction .001 --lr-decay-iters 430000 "
     "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16"),
  ("rampup_samples", 8, B + "--rampup-batch-size 8 8 160 --train-samples 1600 --lr-warmup-samples 32"),
  # decay lengths: sample-based
  ("s_warmup_samples_decay_samples", 8, B + "--train-samples 1600 --lr-warmup-samples 32 --lr-decay-samples 800"),
  ("s_frac_decay_samples", 8, B + "--train-samples 1600 --lr-warmup-fraction .01 --lr-decay-samples 800"),
  ("s_decay_samples_0", 8, B + "--train-samples 1600 --lr-decay-samples 0"),
  ("s_warmup_not_below_decay", 8, B + "--train-samples 1600 --lr-warmup-samples 800 --lr-decay-samples 800"),
  ("s_decay_iters", 8, B + "--train-samples 1600 --lr-decay-iters 50"),
  ("llama3_8b_numbers", 8, M.replace("--seq-length 128 --max-position-embeddings 128", "--seq-length 8192 --max-position-embeddings 8192")
     + "--micro-batch-size 1 --global-batch-size 128 --train-samples 1953125000 --lr-decay-samples 1949218748 --lr-warmup-samples 3906252"),
  # with a step schedule (0.19.2): the iteration-based lengths count args.global_batch_size = mbs x dp
  ("sched_iters_decay_iters", 8, M + "--micro-batch-size 1 --step-batch-size-schedule '0:8 1280:16' --train-iters 100 --lr-warmup-iters 10 --lr-decay-iters 50"),
  ("sched_samples_decay_samples", 8, M + "--micro-batch-size 1 --step-batch-size-schedule '0:8 1280:16' --train-samples 1600 --lr-warmup-samples 32 --lr-decay-samples 800"),
]
out = [{"case": c, "world": w, "argv": shlex.split(a)} for c, w, a in cases]
# the two example scripts, as bash expands them (words after pretrain_gpt.py; see expanded_*.json)
for name in ["train_gpt3_175b_distributed", "train_llama3_8b_h100_fp8", "train_gpt3_175b_distributed_args"]:
    words = json.load(open(f"expanded_{name}.json"))
    i = next(k for k, w in enumerate(words) if w.endswith(".py"))
    out.append({"case": "script_" + name, "world": 8, "argv": words[i + 1:]})
# the 175B script's flags without the split schedule (as if quoted), on its 8 GPUs and on 128
words = json.load(open("expanded_train_gpt3_175b_distributed_args.json"))
i = next(k for k, w in enumerate(words) if w.endswith(".py"))
argv = words[i + 1:]
s = argv.index("--step-batch-size-schedule")
joined = argv[:s + 1] + [" ".join(argv[s + 1:s + 7])] + argv[s + 7:]
out.append({"case": "script_gpt3_schedule_quoted", "world": 8, "argv": joined})
out.append({"case": "script_gpt3_schedule_quoted_128gpus", "world": 128, "argv": joined})
nogbs = joined[:joined.index("--global-batch-size")] + joined[joined.index("--global-batch-size") + 2:]
out.append({"case": "script_gpt3_schedule_quoted_no_gbs_128gpus", "world": 128, "argv": nogbs})
json.dump(out, open("cases.json", "w"), indent=0)
print(len(out), "cases")
