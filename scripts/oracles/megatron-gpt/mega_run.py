"""One Megatron-LM run on CPU: parse_and_validate_args (sys.argv after `--`), then
report_theoretical_memory, num_floating_point_operations, and Megatron's own GPTModel built on the
meta device at TP=PP=1 with vocab_size = the unpadded vocabulary (--count-vocab), its parameters
counted. Prints one JSON object.

usage: WORLD_SIZE=8 RANK=0 python mega_run.py [--count-vocab V] -- <megatron args>
Patched (environment facts only): the device capability (no GPU here).
"""
import contextlib
import copy
import io
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
import torch

torch.cuda.get_device_capability = lambda *a, **k: (9, 0)

argv = sys.argv[1:]
split = argv.index("--")
own, meg = argv[:split], argv[split + 1:]
count_vocab = None
if "--count-vocab" in own:
    count_vocab = int(own[own.index("--count-vocab") + 1])
sys.argv = ["mega_run.py"] + meg

import megatron.training.arguments as A

A.get_device_arch_version = lambda: 9
out = {"argv": meg, "WORLD_SIZE": int(os.environ["WORLD_SIZE"])}
try:
    with contextlib.redirect_stdout(io.StringIO()):
        args = A.parse_and_validate_args()
except BaseException as e:  # Megatron's refusal, verbatim
    out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))
    sys.exit(0)

# Megatron's model-build checks at the run's own sizes (TransformerConfig.__post_init__)
from megatron.training.argument_utils import core_transformer_config_from_args

try:
    with contextlib.redirect_stdout(io.StringIO()):
        core_transformer_config_from_args(copy.deepcopy(args))
except BaseException as e:
    out["model_build_error"] = f"{type(e).__name__}: {e}"
from megatron.core.num_microbatches_calculator import get_num_microbatches
from megatron.training import theoretical_memory_usage as tmu
from megatron.training.training import num_floating_point_operations

out["derived"] = {
    k: getattr(args, k)
    for k in [
        "padded_vocab_size", "data_parallel_size", "kv_channels", "ffn_hidden_size",
        "num_query_groups", "group_query_attention", "sequence_parallel", "recompute_granularity",
        "use_distributed_optimizer", "add_bias_linear", "add_qkv_bias", "normalization",
        "position_embedding_type", "max_position_embeddings", "swiglu",
        "untie_embeddings_and_output_weights", "num_experts", "moe_ffn_hidden_size",
        "moe_router_topk", "expert_model_parallel_size", "expert_tensor_parallel_size",
        "context_parallel_size", "seq_length", "global_batch_size", "micro_batch_size",
        "world_size",
    ]
}
nmb = get_num_microbatches()
out["derived"]["num_microbatches"] = nmb
a1 = copy.deepcopy(args)
with contextlib.redirect_stdout(io.StringIO()) as buf:
    w, act, tot = tmu.report_theoretical_memory(a1, num_microbatches=nmb, verbose=True)
out["report_theoretical_memory"] = [repr(w), repr(act), repr(tot)]
out["verbose"] = [l for l in buf.getvalue().splitlines() if "parameters" in l]
out["weight_and_optimizer_bytes"] = repr(tmu.compute_weight_and_optimizer_memory(copy.deepcopy(args)))
out["activation_bytes_compute_activation_memory"] = repr(
    tmu.compute_activation_memory(copy.deepcopy(args), num_microbatches=nmb))
out["activation_bytes_compute_activation_memory_without_sp"] = repr(
    tmu.compute_activation_memory_without_sp(copy.deepcopy(args), num_microbatches=nmb))
flops = num_floating_point_operations(copy.deepcopy(args), args.global_batch_size)
out["num_floating_point_operations"] = repr(flops)
out["flops_per_token"] = repr(flops / (args.global_batch_size * args.seq_length))

if count_vocab is not None:
    # Megatron's own model, TP = PP = 1, on the meta device: its parameters counted
    import torch.distributed as dist
    from megatron.core import parallel_state
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec, get_gpt_decoder_block_spec
    from megatron.core.models.gpt.gpt_model import GPTModel
    from megatron.training.argument_utils import core_transformer_config_from_args

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    dist.init_process_group("gloo", rank=0, world_size=1)
    parallel_state.initialize_model_parallel(1, 1)
    b = copy.deepcopy(args)
    b.tensor_model_parallel_size = 1
    b.pipeline_model_parallel_size = 1
    b.context_parallel_size = 1
    b.expert_model_parallel_size = 1
    b.expert_tensor_parallel_size = 1
    b.sequence_parallel = False
    b.virtual_pipeline_model_parallel_size = None
    b.use_cpu_initialization = True
    b.perform_initialization = False
    b.transformer_impl = "local"
    b.moe_grouped_gemm = False
    b.no_persist_layer_norm = True
    b.gradient_accumulation_fusion = False
    b.recompute_granularity = None
    b.recompute_method = None
    b.recompute_num_layers = None
    with contextlib.redirect_stdout(io.StringIO()):
        config = core_transformer_config_from_args(b)
    if b.num_experts is not None:
        spec = get_gpt_decoder_block_spec(config, use_transformer_engine=False,
                                          normalization=b.normalization)
    else:
        spec = get_gpt_layer_local_spec(b.num_experts, False, b.qk_layernorm,
                                        b.multi_latent_attention, normalization=b.normalization)
    with torch.device("meta"), contextlib.redirect_stdout(io.StringIO()):
        model = GPTModel(
            config=config,
            transformer_layer_spec=spec,
            vocab_size=count_vocab,
            max_sequence_length=b.max_position_embeddings,
            share_embeddings_and_output_weights=not b.untie_embeddings_and_output_weights,
            position_embedding_type=b.position_embedding_type,
        )
    params = dict(model.named_parameters())  # tied weights once
    out["count"] = {
        "vocab_size": count_vocab,
        "num_parameters": sum(p.numel() for p in params.values()),
        "embedding": sum(p.numel() for n, p in params.items() if n.startswith("embedding.")),
        "output_layer": sum(p.numel() for n, p in params.items() if n.startswith("output_layer.")),
        "final_layernorm": sum(p.numel() for n, p in params.items() if "final_layernorm" in n),
        "layer": [
            sum(p.numel() for n, p in params.items() if n.startswith(f"decoder.layers.{i}."))
            for i in range(b.num_layers)
        ],
        "names_layer0": {n[len("decoder.layers.0."):]: list(p.shape) for n, p in params.items()
                          if n.startswith("decoder.layers.0.")},
    }
print(json.dumps(out))
