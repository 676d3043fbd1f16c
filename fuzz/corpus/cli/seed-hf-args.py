args = TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=2,
    gradient_accumulation_steps=8,
    max_steps=1000,
    dataloader_drop_last=True,  # a comment, with a comma
    parallelism_config=ParallelismConfig(tp_size=2, cp_size=1),
)
