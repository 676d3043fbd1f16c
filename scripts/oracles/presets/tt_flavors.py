# torchtitan 0.3.0's own llama3 flavor table: build each flavor on the meta device and count
import torch
from torchtitan.models.llama3 import llama3_configs, model_registry
for flavor in ["1B", "3B", "8B", "70B", "405B"]:
    spec = model_registry(flavor)
    with torch.device("meta"):
        model = spec.model.build()
    n = sum(p.numel() for p in model.parameters())
    print(flavor, n)
