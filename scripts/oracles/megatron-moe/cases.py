"""Writes cases.json: every mixture-of-experts preset dpcalc has, each on a few expert-parallel
layouts, as a dpcalc link (without `version=`) and as the Megatron-LM command line that link
means: the preset's config.json values (tests/fixtures/model_presets.json, the values dpcalc's
presets hold) under Megatron's argument names, as dpcalc's config.json import maps them
(src/calc/frameworks/megatron/model.rs `CONFIG_JSON`), plus the layout.

usage: python3 cases.py PATH/TO/tests/fixtures/model_presets.json > cases.json
"""
import json
import sys

SEQ = 4096
# (name, world size, expert parallel size, typed --num-experts or None)
LAYOUTS = [
    ("ep8_ws8", 8, 8, None),  # the layout: EP divides every preset's experts
    ("ep16_ws16", 16, 16, None),  # more expert ranks than Mixtral's 8 experts
    ("ep3_ws6", 6, 3, None),  # 3 divides no preset's experts
]
# a typed --num-experts beside a preset: it wins (the model stage's reading does the same)
TYPED = [
    ("Qwen/Qwen3-30B-A3B", "typed12_ep8_ws8", 8, 8, 12),
    ("Qwen/Qwen3-30B-A3B", "typed64_ep8_ws8", 8, 8, 64),
    ("Qwen/Qwen3-30B-A3B", "typed0_ep8_ws8", 8, 8, 0),
]


def experts(c):
    for k in ("num_experts", "num_local_experts", "n_routed_experts"):
        if c.get(k):
            return c[k]
    return 0


def megatron_args(c):
    """The preset's architecture as Megatron arguments (dpcalc's config.json mapping)."""
    a = [
        "--num-layers", c["num_hidden_layers"],
        "--hidden-size", c["hidden_size"],
        "--ffn-hidden-size", c["intermediate_size"],
        "--num-attention-heads", c["num_attention_heads"],
    ]
    mla = c["model_type"].startswith("deepseek")
    if not mla and c["num_key_value_heads"] != c["num_attention_heads"]:
        a += ["--group-query-attention", "--num-query-groups", c["num_key_value_heads"]]
    if c.get("head_dim"):
        a += ["--kv-channels", c["head_dim"]]
    a += ["--num-experts", experts(c), "--moe-router-topk", c["num_experts_per_tok"]]
    if c.get("moe_intermediate_size"):
        a += ["--moe-ffn-hidden-size", c["moe_intermediate_size"]]
    if c.get("n_shared_experts"):
        a += ["--moe-shared-expert-intermediate-size",
              c["n_shared_experts"] * c["moe_intermediate_size"]]
    if c.get("first_k_dense_replace"):
        k, n = c["first_k_dense_replace"], c["num_hidden_layers"]
        a += ["--moe-layer-freq", f"([0]*{k}+[1]*{n - k})"]
    if mla:
        a += ["--multi-latent-attention", "--kv-lora-rank", c["kv_lora_rank"],
              "--qk-head-dim", c["qk_nope_head_dim"], "--qk-pos-emb-head-dim",
              c["qk_rope_head_dim"], "--v-head-dim", c["v_head_dim"]]
        if c.get("q_lora_rank"):
            a += ["--q-lora-rank", c["q_lora_rank"]]
    a += ["--swiglu", "--normalization", "RMSNorm", "--disable-bias-linear",
          "--position-embedding-type", "rope", "--no-rope-fusion"]
    if c["model_type"] in ("qwen3", "qwen3_moe"):
        a += ["--qk-layernorm"]
    if not c.get("tie_word_embeddings", False):
        a += ["--untie-embeddings-and-output-weights"]
    # the NullTokenizer adds one (EOD) to --vocab-size
    a += ["--tokenizer-type", "NullTokenizer", "--vocab-size", c["vocab_size"] - 1]
    return [str(x) for x in a]


def case(name, preset, config, world, ep, typed):
    gbs = 4 * world
    argv = megatron_args(config)
    if typed is not None:
        i = argv.index("--num-experts")
        argv[i + 1] = str(typed)
    argv += [
        "--seq-length", str(SEQ), "--max-position-embeddings", str(SEQ),
        "--micro-batch-size", "1", "--global-batch-size", str(gbs),
        "--expert-model-parallel-size", str(ep), "--use-distributed-optimizer",
        "--train-iters", "10", "--lr", "1e-4", "--bf16",
    ]
    link = [("framework", "megatron"), ("model", preset), ("world_size", world)]
    if typed is not None:
        link.append(("num_experts", typed))
    link += [("seq_length", SEQ), ("max_position_embeddings", SEQ),
             ("global_batch_size", gbs), ("expert_model_parallel_size", ep),
             ("use_distributed_optimizer", "true"), ("micro_batch_size", 1),
             ("train_iters", 10)]
    return {"case": f"{preset.split('/')[-1]}_{name}", "world": world, "argv": argv,
            "link": [[k, str(v)] for k, v in link]}


def main():
    presets = json.load(open(sys.argv[1]))["presets"]
    moe = [(p["name"], p["config"]) for p in presets if experts(p["config"]) > 0]
    out = []
    for name, config in moe:
        for layout, world, ep, typed in LAYOUTS:
            out.append(case(layout, name, config, world, ep, typed))
    by_name = dict(moe)
    for name, layout, world, ep, typed in TYPED:
        out.append(case(layout, name, by_name[name], world, ep, typed))
    json.dump(out, sys.stdout, indent=1)
    print()


main()
