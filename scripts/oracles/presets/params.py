# transformers' own num_parameters() for each config on the meta device (no weights), and
# DeepSpeed's "largest layer" (max over modules of sum(p.numel() for p in m.parameters(recurse=False))).
# Prints one JSON line per model: name, the config keys given, transformers' version, the counts.
import json, sys
import torch, transformers
from transformers import AutoConfig, AutoModelForCausalLM
CONFIGS = json.load(open(sys.argv[1]))
for name, cfg in CONFIGS.items():
    kw = dict(cfg); mt = kw.pop("model_type")
    config = AutoConfig.for_model(mt, **kw)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    largest = max(sum(p.numel() for p in m.parameters(recurse=False)) for m in model.modules())
    print(json.dumps({"name": name, "config": cfg, "transformers": transformers.__version__,
        "outputs": {"num_parameters": model.num_parameters(),
                    "num_parameters_exclude_embeddings": model.num_parameters(exclude_embeddings=True),
                    "largest_layer_params": largest}}))
