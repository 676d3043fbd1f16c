import json, sys, torch
from transformers import AutoConfig, AutoModelForCausalLM
for name, cfg in json.load(open(sys.argv[1])).items():
    kw = dict(cfg); mt = kw.pop("model_type"); kw["num_hidden_layers"] = 2
    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(AutoConfig.for_model(mt, **kw))
    print("==", name)
    for n, mod in m.named_modules():
        own = [(pn, tuple(p.shape)) for pn, p in mod.named_parameters(recurse=False)]
        if own and ".layers.0." not in n: print(n, own)
    print("buffers:", [n for n, _ in m.named_buffers() if "layers.0" in n][:5])
