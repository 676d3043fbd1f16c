# PEFT 0.21.2 get_nb_trainable_parameters() for the LoraConfig axolotl 0.21.0 builds
# (axolotl.loaders.adapter._build_peft_lora_config, lora_target_linear), on the meta device.
import json, sys, torch, peft, transformers
from transformers import AutoConfig, AutoModelForCausalLM
from axolotl.utils.dict import DictDefault
from axolotl.loaders.adapter import _build_peft_lora_config
CONFIGS = json.load(open(sys.argv[1]))
for name in sys.argv[2:]:
    kw = dict(CONFIGS[name]); mt = kw.pop("model_type")
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(mt, **kw))
    for r in (8, 16):
        cfg = DictDefault({"lora_r": r, "lora_alpha": 2 * r, "lora_dropout": 0.0, "lora_target_linear": True})
        lc = _build_peft_lora_config(model, cfg)
        pm = peft.get_peft_model(model, lc)
        trainable, total = pm.get_nb_trainable_parameters()
        print(json.dumps({"name": name, "r": r, "targets": sorted(lc.target_modules), "trainable": trainable,
                          "peft": peft.__version__, "transformers": transformers.__version__}))
        model = pm.unload()
