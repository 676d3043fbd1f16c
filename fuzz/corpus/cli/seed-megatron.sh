#!/bin/bash
# pretrain a GPT
torchrun --nproc_per_node 8 --nnodes=2 --node_rank 0 --master_addr localhost \
    pretrain_gpt.py \
    --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size=4 \
    --num-layers 32 \
    --micro-batch-size 1 \
    --global-batch-size 512 \
    --rampup-batch-size 32 32 1000000 \
    --decrease-batch-size-if-needed \
    --train-samples 10000000 \
    --seq-length 4096 \
    --lr 3.0e-4 \
    --lr-warmup-fraction .01 \
    --bf16 \
    --data-path "$DATA_PATH" \
    --step-batch-size-schedule "0:256 1000:512"
