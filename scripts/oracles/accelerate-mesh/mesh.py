# accelerate's ParallelismConfig and device mesh as axolotl 0.21.0 builds them
# (axolotl.utils.distributed._get_parallel_config_kwargs -> ParallelismConfig(**kwargs)
#  -> build_device_mesh), on CPU with torch's fake process group standing in for the GPUs.
# Prints which mesh dimensions FSDP shards over (accelerate's fsdp_dim_names) and their size.
import sys, os
import torch, torch.distributed as dist
from torch.testing._internal.distributed.fake_pg import FakeStore
from accelerate.utils import ParallelismConfig
from axolotl.utils.distributed import _get_parallel_config_kwargs

ws = int(sys.argv[1]); tp = int(sys.argv[2]); cp = int(sys.argv[3])
shard = None if sys.argv[4] == "-" else int(sys.argv[4])
rep = None if sys.argv[5] == "-" else int(sys.argv[5])
os.environ["WORLD_SIZE"] = str(ws)  # an environment fact: the number of processes
dist.init_process_group("fake", rank=0, world_size=ws, store=FakeStore())
kw = _get_parallel_config_kwargs(ws, tp, cp, shard, rep, True, None, is_deepspeed=False)
pc = ParallelismConfig(**kw)
mesh = pc.build_device_mesh("cpu")
names = pc.fsdp_dim_names
sub = mesh[tuple(names)] if len(names) > 1 else mesh[names[0]]
print(f"world={ws} tp={tp} cp={cp} dp_shard_size={shard} dp_replicate_size={rep} -> kwargs={kw}")
print(f"  mesh dims={mesh.mesh_dim_names} shape={tuple(mesh.shape)}")
print(f"  fsdp_dim_names={names} fsdp mesh shape={tuple(sub.shape)}; shard dim dp_shard_cp size={mesh['dp_shard_cp'].size()}")
dist.destroy_process_group()
