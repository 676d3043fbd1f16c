"""Megatron's default GPT (and variants) run through megatron-core 0.19.2 (mega_run.py) and through
dpcalc (a link, `dpcalc check --json`); prints each comparison and writes gpt_records.json in the
fixture's record format.

usage: python3 cases.py DPCALC_BINARY [NAME_FILTER]
"""
import json
import shlex
import subprocess
import sys

COMMON = ["--tokenizer-type", "NullTokenizer", "--lr", "1e-4", "--train-iters", "10", "--bf16"]

G345 = dict(num_layers=24, hidden_size=1024, num_attention_heads=16, seq_length=1024,
            max_position_embeddings=1024, vocab_size=50256)
G13 = dict(num_layers=24, hidden_size=2048, num_attention_heads=16, seq_length=2048,
           max_position_embeddings=2048, vocab_size=50256)

CASES = [
    ("gpt_345m_default_dp8", 8, dict(G345, micro_batch_size=4, global_batch_size=256)),
    ("gpt_345m_default_tp2_pp2_distopt", 8,
     dict(G345, micro_batch_size=4, global_batch_size=64, tensor_model_parallel_size=2,
          pipeline_model_parallel_size=2, use_distributed_optimizer=True)),
    ("gpt_345m_disable_bias_linear_dp8", 8,
     dict(G345, micro_batch_size=4, global_batch_size=256, disable_bias_linear=True)),
    ("gpt_345m_rmsnorm_dp8", 8,
     dict(G345, micro_batch_size=4, global_batch_size=256, normalization="RMSNorm")),
    ("gpt_345m_rope_dp8", 8,
     dict(G345, micro_batch_size=4, global_batch_size=256, position_embedding_type="rope",
          no_rope_fusion=True)),
    ("gpt_345m_untied_tp2_distopt", 8,
     dict(G345, micro_batch_size=4, global_batch_size=256, tensor_model_parallel_size=2,
          untie_embeddings_and_output_weights=True, use_distributed_optimizer=True)),
    ("gpt_345m_swiglu_default_ffn_dp8", 8,
     dict(G345, micro_batch_size=4, global_batch_size=256, swiglu=True)),
    ("gpt_345m_no_bias_rmsnorm_rope_tp4_pp2", 8,
     dict(G345, micro_batch_size=2, global_batch_size=64, tensor_model_parallel_size=4,
          pipeline_model_parallel_size=2, disable_bias_linear=True, normalization="RMSNorm",
          position_embedding_type="rope", no_rope_fusion=True)),
    ("gpt_1p3b_gqa4_tp4_sp_selective_distopt", 8,
     dict(G13, micro_batch_size=2, global_batch_size=64, tensor_model_parallel_size=4,
          group_query_attention=True, num_query_groups=4, sequence_parallel=True,
          recompute_granularity="selective", use_distributed_optimizer=True)),
    ("gpt_1p3b_gqa4_tp2_sp_selective_swiglu_rope", 8,
     dict(G13, micro_batch_size=1, global_batch_size=32, tensor_model_parallel_size=2,
          group_query_attention=True, num_query_groups=4, sequence_parallel=True,
          recompute_granularity="selective", use_distributed_optimizer=True, swiglu=True,
          ffn_hidden_size=5632, normalization="RMSNorm", disable_bias_linear=True,
          position_embedding_type="rope", no_rope_fusion=True)),
    ("gpt_qwen3_style_qk_layernorm_kv_channels_tp2", 8,
     dict(G345, num_layers=8, micro_batch_size=2, global_batch_size=64,
          tensor_model_parallel_size=2, group_query_attention=True, num_query_groups=4,
          kv_channels=128, qk_layernorm=True, swiglu=True, ffn_hidden_size=3072,
          normalization="RMSNorm", disable_bias_linear=True, position_embedding_type="rope",
          no_rope_fusion=True, untie_embeddings_and_output_weights=True,
          use_distributed_optimizer=True)),
    ("gpt_1p3b_cp2_pp2_distopt", 8,
     dict(G13, seq_length=4096, max_position_embeddings=4096, micro_batch_size=1,
          global_batch_size=16, context_parallel_size=2, pipeline_model_parallel_size=2,
          use_distributed_optimizer=True)),
    ("gpt_1p3b_tp2_pp2_sp_selective_distopt", 8,
     dict(G13, micro_batch_size=1, global_batch_size=32, tensor_model_parallel_size=2,
          pipeline_model_parallel_size=2, sequence_parallel=True,
          recompute_granularity="selective", use_distributed_optimizer=True)),
    ("gpt_1p3b_tp2_pp2_vpp3_sp_selective_distopt", 8,
     dict(G13, micro_batch_size=1, global_batch_size=32, tensor_model_parallel_size=2,
          pipeline_model_parallel_size=2, num_layers_per_virtual_pipeline_stage=4,
          sequence_parallel=True, recompute_granularity="selective",
          use_distributed_optimizer=True)),
    ("gpt_1p3b_pp4_full_recompute", 8,
     dict(G13, micro_batch_size=1, global_batch_size=32, pipeline_model_parallel_size=4,
          recompute_granularity="full", recompute_method="uniform", recompute_num_layers=1)),
    ("gpt_moe_8x_ep4_distopt", 8,
     dict(G345, num_layers=12, micro_batch_size=2, global_batch_size=64, num_experts=8,
          moe_router_topk=2, expert_model_parallel_size=4, use_distributed_optimizer=True)),
    ("gpt_moe_8x_ep8_nodistopt", 8,
     dict(G345, num_layers=12, micro_batch_size=2, global_batch_size=64, num_experts=8,
          moe_router_topk=2, expert_model_parallel_size=8)),
    ("gpt_moe_16x_tp2_ep4_etp1_swiglu_nobias", 8,
     dict(G345, num_layers=12, micro_batch_size=2, global_batch_size=64, num_experts=16,
          moe_router_topk=4, moe_ffn_hidden_size=1408, expert_model_parallel_size=4,
          expert_tensor_parallel_size=1, tensor_model_parallel_size=2, swiglu=True,
          disable_bias_linear=True, normalization="RMSNorm", sequence_parallel=True,
          use_distributed_optimizer=True)),
    # NVIDIA/Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh's model and parallelism on
    # 16 × 8 GPUs, with the GPT-2 BPE vocabulary (50,257) its --vocab-file holds
    ("gpt3_175b_script_128gpus", 128,
     dict(num_layers=96, hidden_size=12288, num_attention_heads=96, seq_length=2048,
          max_position_embeddings=2048, vocab_size=50256, micro_batch_size=1,
          global_batch_size=1536, tensor_model_parallel_size=8, pipeline_model_parallel_size=16)),
    # refusals
    ("gpt_345m_pp5_layers_not_divisible", 10,
     dict(G345, micro_batch_size=1, global_batch_size=10, pipeline_model_parallel_size=5)),
    ("gpt_345m_tp3_heads_not_divisible", 6,
     dict(G345, micro_batch_size=1, global_batch_size=12, tensor_model_parallel_size=3)),
    ("gpt_345m_max_positions_below_seq_length", 8,
     dict(G345, seq_length=2048, micro_batch_size=4, global_batch_size=256)),
    ("gpt_moe_8x_ep3_experts_not_divisible", 6,
     dict(G345, num_layers=12, micro_batch_size=1, global_batch_size=12, num_experts=8,
          moe_router_topk=2, expert_model_parallel_size=3)),
]


def megatron_argv(a):
    out = []
    for k, v in a.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            out.append(flag)
        else:
            out += [flag, str(v)]
    return out


def link(ws, a):
    q = ["framework=megatron", "version=0.19.2", f"world_size={ws}", "train_iters=10"]
    for k, v in a.items():
        if k == "no_rope_fusion":
            continue
        if k == "vocab_size":
            v += 1  # the NullTokenizer's EOD token
        q.append(f"{k}={'true' if v is True else v}")
    return "?" + "&".join(q)


def main():
    binary = sys.argv[1]
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    records = []
    for name, ws, a in CASES:
        if only not in name:
            continue
        argv = megatron_argv(a) + COMMON
        count_vocab = a["vocab_size"] + 1
        cmd = (f"WORLD_SIZE={ws} RANK=0 PYTHONDONTWRITEBYTECODE=1 CUDA_DEVICE_MAX_CONNECTIONS=1 "
               f"venv/bin/python mega_run.py --count-vocab {count_vocab} -- {shlex.join(argv)}")
        raw = subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout
        meg = json.loads(raw.strip().splitlines()[-1])
        q = link(ws, a)
        dp = json.loads(subprocess.run([binary, "check", q, "--json"], capture_output=True,
                                       text=True).stdout)
        o = dp["outputs"]
        print(f"== {name}\n   {q}")
        rec = {"name": name, "inputs": dict(a, WORLD_SIZE=ws), "command": cmd}
        if "error" in meg or "model_build_error" in meg:
            rec["error"] = meg.get("error") or meg["model_build_error"]
            errs = [m for m in dp["messages"] if m["level"] == "error"]
            print("   megatron:", rec["error"])
            print("   dpcalc:  ", [(m["field"], m["message"][:160]) for m in errs])
            records.append(rec)
            continue
        d = meg["derived"]
        rec["derived"] = d
        w, act, tot = meg["report_theoretical_memory"]
        c = meg["count"]
        rec["outputs"] = {
            "weight_and_optimizer_memory": w,
            "activation_memory": act,
            "total_memory": tot,
            "weight_and_optimizer_bytes": meg["weight_and_optimizer_bytes"],
            "activation_bytes_compute_activation_memory": meg["activation_bytes_compute_activation_memory"],
            "activation_bytes_compute_activation_memory_without_sp": meg["activation_bytes_compute_activation_memory_without_sp"],
            "activation_branch": "compute_activation_memory"
            if d["sequence_parallel"] and d["recompute_granularity"] == "selective"
            else "compute_activation_memory_without_sp",
            "num_floating_point_operations": meg["num_floating_point_operations"],
            "flops_per_token": meg["flops_per_token"],
            "num_parameters": c["num_parameters"],
            "embedding_params": c["embedding"],
            "output_layer_params": c["output_layer"],
            "final_layernorm_params": c["final_layernorm"],
            "layer_params": c["layer"],
        }
        checks = [
            ("padded_vocab_size", d["padded_vocab_size"], o.get("padded_vocab_size")),
            ("num_parameters", c["num_parameters"], o.get("num_parameters")),
            ("w+o MB", float(w), o.get("weight_and_optimizer_memory_mb")),
            ("act MB", float(act), o.get("activation_memory_mb")),
            ("total MB", float(tot), o.get("total_memory_mb")),
            ("flops/token", float(meg["flops_per_token"]), o.get("flops_per_token_megatron")),
        ]
        for what, want, got in checks:
            mark = "ok " if want == got else "DIFF"
            extra = "" if want == got or got is None else f" (dpcalc − megatron = {got - want})"
            print(f"   {mark} {what}: megatron {want!r}  dpcalc {got!r}{extra}")
        records.append(rec)
    with open("gpt_records.json", "w") as f:
        json.dump(records, f, indent=1)


main()
