torchrun --nnodes=2 --nproc_per_node 8 train.py \
  --output_dir out \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps=2 \
  --num_train_epochs 3 \
  --dataloader_drop_last \
  --max_steps -1 \
  --bf16 \
  --learning_rate 2e-5
