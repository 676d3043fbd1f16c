//! The form, grouped as Cluster / Parallelism / Batch / Data & schedule.

use std::rc::Rc;

use web_sys::HtmlInputElement;
use yew::prelude::*;

use super::messages::{message_id, FieldMessages};
use crate::calc::{Field, Kind, RawInputs, Report};

/// Label, placeholder (what an empty field means) and a one-line help for each field.
fn describe(field: Field) -> (&'static str, &'static str, &'static str) {
    match field {
        Field::Nodes => ("Nodes", "1", "Machines in the job."),
        Field::GpusPerNode => ("GPUs per node", "8", "GPUs on each machine."),
        Field::WorldSize => (
            "World size",
            "nodes × GPUs",
            "All GPUs (WORLD_SIZE). Optional: overrides nodes × GPUs per node.",
        ),
        Field::TensorParallelSize => (
            "Tensor parallel size",
            "1",
            "GPUs sharing one replica's layers; they see the same data.",
        ),
        Field::ContextParallelSize => (
            "Context parallel size",
            "1",
            "GPUs splitting one sequence; they see the same data.",
        ),
        Field::MicroBatchSize => ("Micro batch size", "1", "Samples per GPU per forward pass."),
        Field::GradientAccumulationSteps => (
            "Gradient accumulation steps",
            "1",
            "Micro batches per optimizer step.",
        ),
        Field::BatchSize => (
            "Batch size (discouraged)",
            "unset",
            "Per-GPU batch; axolotl prefers gradient_accumulation_steps.",
        ),
        Field::NumSamples => (
            "Training rows",
            "required for steps",
            "Rows after axolotl's filtering and the val_set_size split.",
        ),
        Field::NumEpochs => ("Epochs", "1", "May be fractional."),
        Field::MaxSteps => (
            "Max steps",
            "unset",
            "Caps the logged step count; the Trainer runs exactly this many.",
        ),
        Field::SequenceLen => (
            "Sequence length",
            "512",
            "Tokens per sample (per packed bin with packing).",
        ),
        Field::SamplePacking => (
            "Sample packing",
            "",
            "Pack several samples into each sequence.",
        ),
        Field::SamplePackingEffEst => (
            "Packing efficiency estimate",
            "unset",
            "sample_packing_eff_est that axolotl logged (0–1).",
        ),
        Field::TotalNumTokens => (
            "Total tokens",
            "unset",
            "Tokens in the training set (needed with the estimate).",
        ),
        Field::WarmupSteps => (
            "Warmup steps",
            "3 % of steps, ≤ 100",
            "Default: 3 % of the steps, at most 100. Not with warmup_ratio.",
        ),
        Field::WarmupRatio => ("Warmup ratio", "unset", "Fraction of the steps."),
        Field::ValSetSize => (
            "Validation split",
            "0",
            "val_set_size; evaluations need it.",
        ),
        Field::EvalsPerEpoch => ("Evaluations per epoch", "unset", "Turned into eval_steps."),
        Field::SavesPerEpoch => ("Saves per epoch", "unset", "Turned into save_steps."),
    }
}

const GROUPS: &[(&str, &[Field])] = &[
    (
        "Cluster",
        &[Field::Nodes, Field::GpusPerNode, Field::WorldSize],
    ),
    (
        "Parallelism",
        &[Field::TensorParallelSize, Field::ContextParallelSize],
    ),
    (
        "Batch",
        &[
            Field::MicroBatchSize,
            Field::GradientAccumulationSteps,
            Field::BatchSize,
        ],
    ),
    (
        "Data & schedule",
        &[
            Field::NumSamples,
            Field::NumEpochs,
            Field::MaxSteps,
            Field::SequenceLen,
            Field::SamplePacking,
            Field::SamplePackingEffEst,
            Field::TotalNumTokens,
            Field::WarmupSteps,
            Field::WarmupRatio,
            Field::ValSetSize,
            Field::EvalsPerEpoch,
            Field::SavesPerEpoch,
        ],
    ),
];

#[derive(Properties, PartialEq)]
pub struct FormProps {
    pub inputs: RawInputs,
    pub report: Rc<Report>,
    pub on_input: Callback<(Field, String)>,
    /// `readonly=1`: shown, not editable.
    pub readonly: bool,
    /// `embed=1`: the key inputs, plus any other field that is given or has a message.
    pub compact: bool,
}

/// The inputs an embedded view always shows.
const KEY_FIELDS: &[Field] = &[
    Field::Nodes,
    Field::GpusPerNode,
    Field::TensorParallelSize,
    Field::ContextParallelSize,
    Field::MicroBatchSize,
    Field::GradientAccumulationSteps,
    Field::NumSamples,
    Field::NumEpochs,
];

fn shown(field: Field, props: &FormProps) -> bool {
    !props.compact
        || KEY_FIELDS.contains(&field)
        || !props.inputs.get(field).is_empty()
        || props.inputs.conflict(field).is_some()
        || props.report.diags_for(field).next().is_some()
}

#[function_component(Form)]
pub fn form(props: &FormProps) -> Html {
    html! {
        <form class="inputs" aria-label="Run configuration" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            { for GROUPS.iter().map(|(title, fields)| html! {
                <fieldset class="group">
                    <legend>{ *title }</legend>
                    { for fields.iter().filter(|&&f| shown(f, props)).map(|&f| field_row(f, props)) }
                </fieldset>
            }) }
        </form>
    }
}

fn field_row(field: Field, props: &FormProps) -> Html {
    let (label, placeholder, help) = describe(field);
    let key = field.key();
    let id = format!("in-{key}");
    let diags: Vec<_> = props.report.diags_for(field).cloned().collect();
    let invalid = diags.iter().any(|d| d.level == crate::calc::Level::Error);
    let help_id = format!("help-{key}");
    let described: Vec<String> = std::iter::once(help_id.clone())
        .chain((0..diags.len()).map(|n| message_id(field, n)))
        .collect();
    let described = described.join(" ");
    let value = props.inputs.get(field).to_string();
    let on_input = props.on_input.clone();
    let readonly = props.readonly;

    let control = if field.kind() == Kind::Flag {
        let checked = matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "true" | "1" | "yes" | "on"
        );
        let onchange = Callback::from(move |e: Event| {
            let el: HtmlInputElement = e.target_unchecked_into();
            on_input.emit((
                field,
                if el.checked() {
                    "true".into()
                } else {
                    String::new()
                },
            ));
        });
        html! {
            <input type="checkbox" id={id.clone()} name={key} {checked} {onchange} disabled={readonly}
                aria-invalid={invalid.to_string()} aria-describedby={described} />
        }
    } else {
        let oninput = Callback::from(move |e: InputEvent| {
            let el: HtmlInputElement = e.target_unchecked_into();
            on_input.emit((field, el.value()));
        });
        let mode = if field.kind() == Kind::Count {
            "numeric"
        } else {
            "decimal"
        };
        html! {
            <input type="text" id={id.clone()} name={key} {value} {placeholder} inputmode={mode} {readonly}
                autocomplete="off" spellcheck="false" {oninput}
                aria-invalid={invalid.to_string()} aria-describedby={described} />
        }
    };
    let class = classes!(
        "field",
        (field.kind() == Kind::Flag).then_some("flag"),
        invalid.then_some("invalid")
    );
    html! {
        <div {class}>
            <label for={id}>
                <span class="label">{ label }</span>
                <code class="key">{ key }</code>
            </label>
            { control }
            <p id={help_id} class="help">{ help }</p>
            <FieldMessages {field} {diags} />
        </div>
    }
}
