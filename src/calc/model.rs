//! A model's architecture, under config.json's own key names, and its parameter counts.
//!
//! [`Model`] holds the shape keys of a Hugging Face `config.json` (the names transformers reads) plus
//! the family facts that change a count: Qwen2's hard-wired q/k/v bias, Qwen3's q/k RMSNorm over
//! `head_dim`, Gemma 2's four norms per layer, the fused routed experts of Mixtral, Qwen3-MoE and
//! DeepSeek-V3 (one module of `3·E·h·f` parameters in transformers 5), DeepSeek-V3's multi-head
//! latent attention and its first dense layers (DeepSeek-V2 has the same layout), Phi-3's fused
//! `qkv_proj` and `gate_up_proj`, Gemma 3's text model (Gemma 2's norms and Qwen3's q/k norms).
//! DeepSeek-V3 is counted without its multi-token prediction layer, which transformers does not
//! build. [`ModelType::MegatronGpt`] is the GPT Megatron-LM builds from its own arguments, and the
//! fields only Megatron's arguments set ([`Model::gated_mlp`], [`Model::linear_bias`],
//! [`Model::layer_norm`], [`Model::position_embeddings`]) describe its GeLU MLP, linear biases,
//! LayerNorm and learned position embeddings, on it or on a preset they change.
//!
//! Each count is dpcalc's own sum over the modules the architecture has, in checked `u128`
//! arithmetic (an overflow gives `None`, never a panic or a wrapped number). They equal, and
//! `tests/model.rs` asserts it on the recorded vectors (tests/fixtures/model_presets.json):
//! - [`Model::num_parameters`]: transformers 5.24 `PreTrainedModel.num_parameters()` (tied weights
//!   once); for Megatron's layout ([`Model::megatron_layout`]), megatron-core 0.19.2's `GPTModel`
//!   at TP = PP = 1 with the vocabulary unpadded (tests/fixtures/model_megatron.json, the records
//!   with a `command`, checked by tests/fit.rs);
//! - [`Model::num_parameters_exclude_embeddings`]: `num_parameters(exclude_embeddings=True)`, which
//!   drops the `nn.Embedding` weights only (the token and learned position embeddings; an untied
//!   `lm_head` stays counted);
//! - [`Model::largest_layer_params`]: DeepSpeed's `model_to_params` "largest layer", the largest
//!   `sum(p.numel() for p in m.parameters(recurse=False))` over the modules as transformers 5
//!   lays them out (the embedding for dense models, one layer's fused experts for MoE models).
//!
//! The presets ([`PRESETS`], [`preset`]) are 16 widely trained Hub models and 19 more (models
//! axolotl's example configs train), with their config.json values; each one's count
//! equals transformers' `num_parameters()` (tests/fixtures/model_presets.json) and the Hub's
//! published count (see the comment beside each).

use std::ops::Range;

use super::num;

/// config.json's `model_type`: the transformers family, which decides the layout of a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    Llama,
    Mistral,
    Mixtral,
    Qwen2,
    Qwen3,
    Qwen3Moe,
    DeepseekV3,
    Gemma,
    Gemma2,
    /// Phi-3: Llama's counts in fused modules (`qkv_proj`, `gate_up_proj`).
    Phi3,
    /// Gemma 3's text model (`Gemma3ForCausalLM`): Gemma 2's four norms and Qwen3's q/k norms.
    Gemma3Text,
    /// DeepSeek-V2 (-Lite): DeepSeek-V3's layout (MLA, shared and routed experts) in
    /// transformers 5.
    DeepseekV2,
    /// The GPT Megatron-LM builds from its own arguments (no preset): every layer has routed
    /// experts when `--num-experts` is given, each `--moe-ffn-hidden-size` wide (the FFN size
    /// unless given); the embeddings are tied unless `--untie-embeddings-and-output-weights`. Not
    /// a config.json `model_type` (not in [`ModelType::ALL`]).
    MegatronGpt,
}

impl ModelType {
    pub const ALL: [ModelType; 12] = [
        ModelType::Llama,
        ModelType::Mistral,
        ModelType::Mixtral,
        ModelType::Qwen2,
        ModelType::Qwen3,
        ModelType::Qwen3Moe,
        ModelType::DeepseekV3,
        ModelType::Gemma,
        ModelType::Gemma2,
        ModelType::Phi3,
        ModelType::Gemma3Text,
        ModelType::DeepseekV2,
    ];

    /// The `model_type` string of config.json.
    pub fn key(self) -> &'static str {
        match self {
            ModelType::Llama => "llama",
            ModelType::Mistral => "mistral",
            ModelType::Mixtral => "mixtral",
            ModelType::Qwen2 => "qwen2",
            ModelType::Qwen3 => "qwen3",
            ModelType::Qwen3Moe => "qwen3_moe",
            ModelType::DeepseekV3 => "deepseek_v3",
            ModelType::Gemma => "gemma",
            ModelType::Gemma2 => "gemma2",
            ModelType::Phi3 => "phi3",
            ModelType::Gemma3Text => "gemma3_text",
            ModelType::DeepseekV2 => "deepseek_v2",
            ModelType::MegatronGpt => "megatron_gpt",
        }
    }

    pub fn from_key(key: &str) -> Option<ModelType> {
        ModelType::ALL.into_iter().find(|t| t.key() == key)
    }

    /// transformers' default for `tie_word_embeddings` when config.json leaves it out.
    pub fn ties_by_default(self) -> bool {
        matches!(
            self,
            ModelType::Gemma | ModelType::Gemma2 | ModelType::Gemma3Text | ModelType::MegatronGpt
        )
    }

    /// Qwen3 (and its MoE) and Gemma 3: an RMSNorm over `head_dim` on each head's queries and keys.
    pub fn has_qk_norm(self) -> bool {
        matches!(
            self,
            ModelType::Qwen3 | ModelType::Qwen3Moe | ModelType::Gemma3Text
        )
    }

    /// DeepSeek-V2 and V3: multi-head latent attention, shared experts beside the routed ones.
    pub fn is_deepseek(self) -> bool {
        matches!(self, ModelType::DeepseekV2 | ModelType::DeepseekV3)
    }
}

/// A decoder-only architecture, under config.json's key names.
///
/// `num_experts` stands for Mixtral's `num_local_experts`, Qwen3-MoE's `num_experts` and
/// DeepSeek-V3's `n_routed_experts` (0: dense). The MLA keys are read for DeepSeek-V3 only, the MoE
/// layer pattern (`first_k_dense_replace`, `decoder_sparse_step`, `mlp_only_layers`) by the family
/// that has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub model_type: ModelType,
    pub hidden_size: u64,
    pub num_hidden_layers: u64,
    pub num_attention_heads: u64,
    pub num_key_value_heads: u64,
    /// `None`: `hidden_size / num_attention_heads`, as transformers derives it.
    pub head_dim: Option<u64>,
    pub intermediate_size: u64,
    pub vocab_size: u64,
    pub tie_word_embeddings: bool,
    /// Llama, Qwen3(-MoE), Gemma(2): q, k, v and o biases; DeepSeek-V3: q_a, kv_a and o biases.
    /// Qwen2 ignores it (its q/k/v bias is part of the architecture); Mistral and Mixtral too.
    pub attention_bias: bool,
    pub num_experts: u64,
    pub num_experts_per_tok: u64,
    /// The routed (and, times `n_shared_experts`, the shared) expert width; Mixtral's experts
    /// use `intermediate_size`.
    pub moe_intermediate_size: u64,
    pub n_shared_experts: u64,
    pub first_k_dense_replace: u64,
    pub decoder_sparse_step: u64,
    pub mlp_only_layers: Vec<u64>,
    /// `None`: a full `q_proj` (DeepSeek-V2-Lite style).
    pub q_lora_rank: Option<u64>,
    pub kv_lora_rank: u64,
    pub qk_nope_head_dim: u64,
    pub qk_rope_head_dim: u64,
    pub v_head_dim: u64,
    /// A gated MLP (gate, up and down projections: SwiGLU), as every config.json family here
    /// has; `false`: Megatron's MLP without `--swiglu` (up and down projections, GeLU).
    pub gated_mlp: bool,
    /// Megatron's `--add-bias-linear` (its default, off with `--disable-bias-linear`): a bias on
    /// every linear layer of a decoder layer (the fused q/k/v, the output projection, fc1 and fc2,
    /// each routed expert's fc1 and fc2, the router). Megatron refuses it with shared experts;
    /// with DeepSeek's layout (MLA and shared experts) nothing is counted.
    pub linear_bias: bool,
    /// LayerNorm, weight and bias (2·h per norm), Megatron's default `--normalization`;
    /// `false`: RMSNorm, weight only, as every config.json family here.
    pub layer_norm: bool,
    /// A norm over `head_dim` on each head's queries and keys: the family's (Qwen3, Gemma 3), or
    /// Megatron's `--qk-layernorm`.
    pub qk_norm: bool,
    /// The rows of a learned absolute position embedding (Megatron's default
    /// `--position-embedding-type learned_absolute`: `--max-position-embeddings` rows of
    /// `hidden_size`); 0 for rotary embeddings or none, which have no parameters.
    pub position_embeddings: u64,
    /// Megatron's `--multi-latent-attention` on its own GPT: `MLASelfAttention`
    /// (megatron/core/transformer/multi_latent_attention.py) with the sizes of
    /// [`Model::q_lora_rank`], [`Model::kv_lora_rank`], `--qk-head-dim`
    /// ([`Model::qk_nope_head_dim`]), `--qk-pos-emb-head-dim` ([`Model::qk_rope_head_dim`]) and
    /// [`Model::v_head_dim`]. DeepSeek's families are MLA by their type.
    pub multi_latent_attention: bool,
}

fn mul(xs: &[u64]) -> Option<u128> {
    xs.iter()
        .try_fold(1u128, |acc, &x| acc.checked_mul(u128::from(x)))
}

fn sum(xs: &[Option<u128>]) -> Option<u128> {
    xs.iter().try_fold(0u128, |acc, &x| acc.checked_add(x?))
}

/// The parameter count of each module of one decoder layer (`recurse=False`, as DeepSpeed sums them).
struct Layer {
    modules: Vec<Option<u128>>,
    /// The fused routed experts (for the active-parameter conventions).
    routed_experts: u128,
}

impl Model {
    /// A dense Llama-style model with everything else off (the base of the presets).
    fn dense(
        model_type: ModelType,
        [h, layers, heads, kv, ffn, vocab]: [u64; 6],
        tie: bool,
    ) -> Model {
        Model {
            model_type,
            hidden_size: h,
            num_hidden_layers: layers,
            num_attention_heads: heads,
            num_key_value_heads: kv,
            head_dim: None,
            intermediate_size: ffn,
            vocab_size: vocab,
            tie_word_embeddings: tie,
            attention_bias: false,
            num_experts: 0,
            num_experts_per_tok: 0,
            moe_intermediate_size: 0,
            n_shared_experts: 0,
            first_k_dense_replace: 0,
            decoder_sparse_step: 1,
            mlp_only_layers: Vec::new(),
            q_lora_rank: None,
            kv_lora_rank: 0,
            qk_nope_head_dim: 0,
            qk_rope_head_dim: 0,
            v_head_dim: 0,
            gated_mlp: true,
            linear_bias: false,
            layer_norm: false,
            qk_norm: model_type.has_qk_norm(),
            position_embeddings: 0,
            multi_latent_attention: false,
        }
    }

    /// A model of `model_type` with every size 0 (to be filled from typed keys), tied as the
    /// family ties by default.
    pub fn blank(model_type: ModelType) -> Model {
        Model::dense(model_type, [0; 6], model_type.ties_by_default())
    }

    /// The head dimension transformers uses: `head_dim`, else `hidden_size // num_attention_heads`.
    pub fn resolved_head_dim(&self) -> Option<u64> {
        match self.head_dim {
            Some(d) => Some(d),
            None => self.hidden_size.checked_div(self.num_attention_heads),
        }
    }

    pub fn is_moe(&self) -> bool {
        self.num_experts > 0
            && matches!(
                self.model_type,
                ModelType::Mixtral
                    | ModelType::Qwen3Moe
                    | ModelType::DeepseekV2
                    | ModelType::DeepseekV3
                    | ModelType::MegatronGpt
            )
    }

    /// Megatron's `--num-experts` for this model: its routed experts when it is a mixture of
    /// experts ([`Model::is_moe`]), else unset (`validate_args` also reads `--num-experts 0` as
    /// unset). The one rule for what a model means to Megatron's expert checks and its memory.
    pub fn megatron_num_experts(&self) -> Option<u64> {
        self.is_moe().then_some(self.num_experts)
    }

    /// Whether only Megatron builds this layout: its own GPT, or a preset its arguments changed
    /// (a plain MLP, linear biases, LayerNorm, learned positions, q/k norms the family lacks). Its
    /// counts are then those of
    /// Megatron's `GPTModel`, not of a transformers model.
    pub fn megatron_layout(&self) -> bool {
        self.model_type == ModelType::MegatronGpt
            || !self.gated_mlp
            || self.linear_bias
            || self.layer_norm
            || self.position_embeddings > 0
            || (self.qk_norm && !self.model_type.has_qk_norm())
    }

    pub fn is_mla(&self) -> bool {
        self.model_type.is_deepseek() || self.multi_latent_attention
    }

    /// Whether MLA normalizes its latent query and key/value (`q_a_layernorm`,
    /// `kv_a_layernorm`): DeepSeek's families always; Megatron's `MLASelfAttention` only with
    /// `--qk-layernorm`, where the TE spec fuses each into its up projection
    /// (`TELayerNormColumnParallelLinear`; else `q_layernorm` and `kv_layernorm` are
    /// `IdentityOp`: `get_gpt_layer_with_transformer_engine_submodules`,
    /// megatron/core/models/gpt/gpt_layer_specs.py at 5fe3f06).
    pub fn mla_latent_norms(&self) -> bool {
        self.model_type.is_deepseek() || self.qk_norm
    }

    /// Whether decoder layer `i` (0-based) has routed experts, as the family's decoder layer decides.
    pub fn is_moe_layer(&self, i: u64) -> bool {
        if !self.is_moe() {
            return false;
        }
        match self.model_type {
            ModelType::Mixtral | ModelType::MegatronGpt => true,
            ModelType::Qwen3Moe => {
                !self.mlp_only_layers.contains(&i)
                    && self.decoder_sparse_step > 0
                    && (i + 1) % self.decoder_sparse_step == 0
            }
            ModelType::DeepseekV2 | ModelType::DeepseekV3 => i >= self.first_k_dense_replace,
            _ => false,
        }
    }

    /// Whether decoder layer `i` holds an MoE block: one with routed experts, or DeepSeek's past
    /// `first_k_dense_replace` whatever its expert count (transformers' decoder layer decides by
    /// the index alone: with `n_routed_experts` 0 the block keeps its shared experts and an empty
    /// router).
    pub fn moe_block(&self, i: u64) -> bool {
        if self.model_type.is_deepseek() {
            i >= self.first_k_dense_replace
        } else {
            self.is_moe_layer(i)
        }
    }

    /// The width of one routed expert (Megatron's `--moe-ffn-hidden-size` is its FFN size unless
    /// given).
    pub fn expert_intermediate_size(&self) -> u64 {
        match self.model_type {
            ModelType::Mixtral => self.intermediate_size,
            ModelType::MegatronGpt if self.moe_intermediate_size == 0 => self.intermediate_size,
            _ => self.moe_intermediate_size,
        }
    }

    /// One norm's parameters: its weight, and its bias under LayerNorm.
    fn norm(&self, width: u64) -> Option<u128> {
        mul(&[width, if self.layer_norm { 2 } else { 1 }])
    }

    /// The projections of an MLP of `width` (gate and up, or up alone) and their biases.
    fn up_projections(&self) -> u64 {
        if self.gated_mlp {
            2
        } else {
            1
        }
    }

    /// The number of layers with routed experts.
    pub fn num_moe_layers(&self) -> u64 {
        self.moe_layers_in(0..self.num_hidden_layers)
    }

    /// How many layers of `layers` have routed experts ([`Self::is_moe_layer`]), counted from
    /// the family's pattern without walking the layers (a typed layer count can be 10¹⁸).
    pub fn moe_layers_in(&self, layers: Range<u64>) -> u64 {
        if !self.is_moe() || layers.is_empty() {
            return 0;
        }
        match self.model_type {
            ModelType::Mixtral | ModelType::MegatronGpt => layers.end - layers.start,
            ModelType::Qwen3Moe => {
                let step = self.decoder_sparse_step;
                if step == 0 {
                    return 0;
                }
                // layer i is sparse when step divides i + 1: the multiples of step in
                // start + 1 ..= end, less the listed dense ones among them (each once)
                let sparse = layers.end / step - layers.start / step;
                let mut listed: Vec<u64> = self
                    .mlp_only_layers
                    .iter()
                    .copied()
                    .filter(|&i| layers.contains(&i) && (i + 1) % step == 0)
                    .collect();
                listed.sort_unstable();
                listed.dedup();
                sparse - listed.len() as u64
            }
            ModelType::DeepseekV2 | ModelType::DeepseekV3 => self.deepseek_moe_blocks(layers),
            _ => 0,
        }
    }

    /// DeepSeek's layers of `layers` past `first_k_dense_replace`.
    fn deepseek_moe_blocks(&self, layers: Range<u64>) -> u64 {
        layers
            .end
            .saturating_sub(layers.start.max(self.first_k_dense_replace))
    }

    /// How many layers of `layers` hold an MoE block ([`Self::moe_block`]).
    pub fn moe_blocks_in(&self, layers: Range<u64>) -> u64 {
        if self.model_type.is_deepseek() {
            self.deepseek_moe_blocks(layers)
        } else {
            self.moe_layers_in(layers)
        }
    }

    /// The decoder layers by kind, each kind once: `(how many, the layer)` for the layers without
    /// and with an MoE block (a layer's parameters depend on its index only through its kind).
    fn layer_kinds(&self) -> Option<Vec<(u64, Layer)>> {
        let moe = self.moe_blocks_in(0..self.num_hidden_layers);
        [(self.num_hidden_layers - moe, false), (moe, true)]
            .into_iter()
            .filter(|&(n, _)| n > 0)
            .map(|(n, kind)| Some((n, self.layer_of_kind(kind)?)))
            .collect()
    }

    fn attention(&self) -> Option<Vec<Option<u128>>> {
        let h = self.hidden_size;
        let n = self.num_attention_heads;
        if self.is_mla() {
            // DeepSeek's q_a, kv_a and o biases; Megatron's MLA builds its down and up
            // projections with `bias=False` and `linear_proj` with `--add-bias-linear`
            // (`MLASelfAttention.__init__`, `MultiLatentAttention.__init__`)
            let bias = u64::from(self.attention_bias);
            let o_bias = bias.max(u64::from(self.linear_bias));
            let latent_norm = |r: u64| {
                if self.mla_latent_norms() {
                    self.norm(r)
                } else {
                    Some(0)
                }
            };
            let qk = self.qk_nope_head_dim.checked_add(self.qk_rope_head_dim)?;
            let mut m = match self.q_lora_rank {
                Some(r) => vec![
                    sum(&[mul(&[h, r]), mul(&[bias, r])]), // q_a_proj (linear_q_down_proj)
                    latent_norm(r),                        // q_a_layernorm
                    mul(&[r, n, qk]),                      // q_b_proj (linear_q_up_proj)
                ],
                None => vec![mul(&[h, n, qk])], // q_proj
            };
            let kv_a = self.kv_lora_rank.checked_add(self.qk_rope_head_dim)?;
            m.push(sum(&[mul(&[h, kv_a]), mul(&[bias, kv_a])])); // kv_a_proj_with_mqa
            m.push(latent_norm(self.kv_lora_rank)); // kv_a_layernorm
            let kv_b = self.qk_nope_head_dim.checked_add(self.v_head_dim)?;
            m.push(mul(&[self.kv_lora_rank, n, kv_b])); // kv_b_proj (linear_kv_up_proj)
            m.push(sum(&[mul(&[n, self.v_head_dim, h]), mul(&[o_bias, h])])); // o_proj
            return Some(m);
        }
        let d = self.resolved_head_dim()?;
        let kv = self.num_key_value_heads;
        let (qkv_bias, o_bias) = match self.model_type {
            ModelType::Qwen2 => (1, 0),
            ModelType::Mistral | ModelType::Mixtral | ModelType::Phi3 => (0, 0),
            _ => (
                u64::from(self.attention_bias),
                u64::from(self.attention_bias),
            ),
        };
        // Megatron's linear biases: linear_qkv and linear_proj
        let linear = u64::from(self.linear_bias);
        let (qkv_bias, o_bias) = (qkv_bias.max(linear), o_bias.max(linear));
        if self.model_type == ModelType::Phi3 {
            let qkv = n.checked_add(kv.checked_mul(2)?)?;
            return Some(vec![
                sum(&[mul(&[h, qkv, d]), mul(&[qkv_bias, qkv, d])]), // qkv_proj
                sum(&[mul(&[n, d, h]), mul(&[o_bias, h])]),          // o_proj
            ]);
        }
        let mut m = vec![
            sum(&[mul(&[h, n, d]), mul(&[qkv_bias, n, d])]), // q_proj
            sum(&[mul(&[h, kv, d]), mul(&[qkv_bias, kv, d])]), // k_proj
            sum(&[mul(&[h, kv, d]), mul(&[qkv_bias, kv, d])]), // v_proj
            sum(&[mul(&[n, d, h]), mul(&[o_bias, h])]),      // o_proj
        ];
        if self.qk_norm {
            m.push(self.norm(d)); // q_norm
            m.push(self.norm(d)); // k_norm
        }
        Some(m)
    }

    /// A decoder layer without (`moe_block` false) or with an MoE block.
    fn layer_of_kind(&self, moe_block: bool) -> Option<Layer> {
        let h = self.hidden_size;
        // Megatron builds no biases beside shared experts; MLA's are not modelled
        if self.linear_bias && self.model_type.is_deepseek() {
            return None;
        }
        let mut modules = self.attention()?;
        let norms = if matches!(self.model_type, ModelType::Gemma2 | ModelType::Gemma3Text) {
            4
        } else {
            2
        };
        for _ in 0..norms {
            modules.push(self.norm(h));
        }
        let bias = u64::from(self.linear_bias);
        let up = self.up_projections();
        let mut routed_experts = 0;
        if moe_block {
            let f = self.expert_intermediate_size();
            let e = self.num_experts;
            modules.push(sum(&[mul(&[e, h]), mul(&[bias, e])])); // router gate
                                                                 // each expert's up (and gate) and down projections, and their biases
            routed_experts = sum(&[
                mul(&[up + 1, e, h, f]),
                mul(&[bias, e, up, f]),
                mul(&[bias, e, h]),
            ])?;
            modules.push(Some(routed_experts)); // fused gate_up_proj + down_proj
            if self.model_type.is_deepseek() {
                let shared = f.checked_mul(self.n_shared_experts)?;
                for _ in 0..=up {
                    modules.push(mul(&[h, shared])); // shared gate/up/down
                }
            }
        } else {
            let f = self.intermediate_size;
            if self.model_type == ModelType::Phi3 {
                modules.push(sum(&[mul(&[up, h, f]), mul(&[bias, up, f])])); // gate_up_proj
            } else {
                for _ in 0..up {
                    modules.push(sum(&[mul(&[h, f]), mul(&[bias, f])])); // gate/up_proj (fc1)
                }
            }
            modules.push(sum(&[mul(&[h, f]), mul(&[bias, h])])); // down_proj (fc2)
        }
        Some(Layer {
            modules,
            routed_experts,
        })
    }

    /// Decoder layer `i`'s parameters: `(all, the routed experts among them)`.
    pub fn layer_params(&self, i: u64) -> Option<(u128, u128)> {
        self.kind_params(self.moe_block(i))
    }

    /// The parameters of a decoder layer without (`moe_block` false) or with an MoE block:
    /// `(all, the routed experts among them)`.
    pub fn kind_params(&self, moe_block: bool) -> Option<(u128, u128)> {
        let layer = self.layer_of_kind(moe_block)?;
        Some((sum(&layer.modules)?, layer.routed_experts))
    }

    /// A decoder layer's norm weights (and biases): the two (Gemma 2 and 3: four) hidden-size
    /// norms, Q and K norms, MLA's low-rank norms. What bitsandbytes leaves unquantized in a
    /// layer: transformers' `replace_with_bnb_linear` converts only `nn.Linear` modules.
    pub fn layer_norm_params(&self) -> Option<u128> {
        let h = self.hidden_size;
        let norms: u128 = if matches!(self.model_type, ModelType::Gemma2 | ModelType::Gemma3Text) {
            4
        } else {
            2
        };
        let mut total = self.norm(h)?.checked_mul(norms)?;
        if self.is_mla() {
            if !self.mla_latent_norms() {
                return Some(total);
            }
            total = total.checked_add(self.norm(self.kv_lora_rank)?)?;
            if let Some(r) = self.q_lora_rank {
                total = total.checked_add(self.norm(r)?)?;
            }
        } else if self.qk_norm {
            total = total.checked_add(self.norm(self.resolved_head_dim()?)?.checked_mul(2)?)?;
        }
        Some(total)
    }

    /// The input embeddings: the token embedding's weight (`vocab_size × hidden_size`) and a
    /// learned position embedding's (`position_embeddings × hidden_size`).
    pub fn embedding_params(&self) -> Option<u128> {
        sum(&[
            mul(&[self.vocab_size, self.hidden_size]),
            mul(&[self.position_embeddings, self.hidden_size]),
        ])
    }

    /// The output layer's weight (`vocab_size × hidden_size`; the token embedding's when tied).
    pub fn output_layer_params(&self) -> Option<u128> {
        mul(&[self.vocab_size, self.hidden_size])
    }

    /// The final norm before the output layer.
    pub fn final_norm_params(&self) -> Option<u128> {
        self.norm(self.hidden_size)
    }

    /// transformers' `num_parameters()`: every parameter once (a tied `lm_head` is the embedding).
    /// For Megatron's own arguments, its `GPTModel`'s parameters at TP = PP = 1, with the
    /// vocabulary as given (Megatron's embedding holds the padded vocabulary).
    pub fn num_parameters(&self) -> Option<u128> {
        let mut total = self.embedding_params()?;
        if !self.tie_word_embeddings {
            total = total.checked_add(self.output_layer_params()?)?;
        }
        total = total.checked_add(self.final_norm_params()?)?;
        for (n, layer) in self.layer_kinds()? {
            total = total.checked_add(sum(&layer.modules)?.checked_mul(u128::from(n))?)?;
        }
        Some(total)
    }

    /// transformers' `num_parameters(exclude_embeddings=True)`: without the `nn.Embedding`
    /// weights (the token embedding and a learned position embedding).
    pub fn num_parameters_exclude_embeddings(&self) -> Option<u128> {
        self.num_parameters()?.checked_sub(self.embedding_params()?)
    }

    /// All routed experts' parameters (0 for a dense model).
    pub fn routed_expert_params(&self) -> Option<u128> {
        self.layer_kinds()?.iter().try_fold(0u128, |acc, (n, l)| {
            acc.checked_add(l.routed_experts.checked_mul(u128::from(*n))?)
        })
    }

    /// DeepSpeed's largest layer: the largest module's own parameters (embedding, `lm_head`, a
    /// projection, a norm or one layer's fused experts).
    pub fn largest_layer_params(&self) -> Option<u128> {
        // embed_tokens, and lm_head (tied or not); a position embedding is its own module
        let mut largest = self
            .output_layer_params()?
            .max(mul(&[self.position_embeddings, self.hidden_size])?);
        for (_, layer) in self.layer_kinds()? {
            for m in layer.modules {
                largest = largest.max(m?);
            }
        }
        Some(largest)
    }

    /// Reads a Hugging Face `config.json` (as transformers does: a missing `head_dim` is derived,
    /// a missing `tie_word_embeddings` takes the family default, `num_local_experts` and
    /// `n_routed_experts` stand for `num_experts`). `None` for an unknown `model_type` or a
    /// missing shape key.
    pub fn from_config(config: &serde_json::Value) -> Option<Model> {
        let model_type = ModelType::from_key(config.get("model_type")?.as_str()?)?;
        let int = |k: &str| config.get(k).and_then(serde_json::Value::as_u64);
        let flag = |k: &str| config.get(k).and_then(serde_json::Value::as_bool);
        let mut m = Model::dense(
            model_type,
            [
                int("hidden_size")?,
                int("num_hidden_layers")?,
                int("num_attention_heads")?,
                int("num_key_value_heads").or(int("num_attention_heads"))?,
                int("intermediate_size")?,
                int("vocab_size")?,
            ],
            flag("tie_word_embeddings").unwrap_or(model_type.ties_by_default()),
        );
        m.head_dim = int("head_dim");
        m.attention_bias = flag("attention_bias").unwrap_or(false);
        m.num_experts = int("num_experts")
            .or(int("num_local_experts"))
            .or(int("n_routed_experts"))
            .unwrap_or(0);
        m.num_experts_per_tok = int("num_experts_per_tok").unwrap_or(0);
        m.moe_intermediate_size = int("moe_intermediate_size").unwrap_or(0);
        m.n_shared_experts = int("n_shared_experts").unwrap_or(0);
        m.first_k_dense_replace = int("first_k_dense_replace").unwrap_or(0);
        m.decoder_sparse_step = int("decoder_sparse_step").unwrap_or(1);
        if let Some(list) = config
            .get("mlp_only_layers")
            .and_then(serde_json::Value::as_array)
        {
            m.mlp_only_layers = list.iter().filter_map(serde_json::Value::as_u64).collect();
        }
        if model_type.is_deepseek() {
            m.q_lora_rank = int("q_lora_rank");
            m.kv_lora_rank = int("kv_lora_rank")?;
            m.qk_nope_head_dim = int("qk_nope_head_dim")?;
            m.qk_rope_head_dim = int("qk_rope_head_dim")?;
            m.v_head_dim = int("v_head_dim")?;
        }
        Some(m)
    }
}

/// The Hub ids of the presets: the 16 widely trained models, then those axolotl's example configs
/// train.
pub const PRESETS: [&str; 35] = [
    "meta-llama/Llama-3.1-8B",
    "meta-llama/Llama-3.1-70B",
    "meta-llama/Llama-3.1-405B",
    "meta-llama/Llama-3.2-1B",
    "Qwen/Qwen2.5-0.5B",
    "Qwen/Qwen2.5-7B",
    "Qwen/Qwen2.5-72B",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-32B",
    "Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3-235B-A22B",
    "mistralai/Mistral-7B-v0.1",
    "mistralai/Mixtral-8x7B-v0.1",
    "deepseek-ai/DeepSeek-V3",
    "google/gemma-7b",
    "google/gemma-2-9b",
    // models axolotl's example configs train
    "meta-llama/Llama-2-7b-hf",
    "meta-llama/Llama-2-13b-hf",
    "meta-llama/Llama-2-70b-hf",
    "meta-llama/Llama-3.2-3B",
    "mistralai/Mistral-7B-v0.3",
    "Qwen/Qwen3-4B",
    "google/gemma-2-2b",
    "Qwen/Qwen3-0.6B",
    "Qwen/Qwen3-1.7B",
    "Qwen/Qwen3-14B",
    "google/gemma-2-27b",
    "microsoft/Phi-3-mini-4k-instruct",
    "microsoft/Phi-3-medium-4k-instruct",
    "google/gemma-3-1b-pt",
    "deepseek-ai/DeepSeek-V2-Lite",
    "mistral-community/Mixtral-8x22B-v0.1",
    "Qwen/Qwen2.5-14B",
    "Qwen/Qwen2.5-32B",
    "google/gemma-3-270m",
];

/// Other names configs give a preset's model, each with the preset it names: `(name, preset)`.
///
/// - Renamed Hub ids: Meta renamed `Meta-Llama-3.1-*` to `Llama-3.1-*` (the old id redirects to
///   the same repository, so the same config.json).
/// - Mirrors (ungated copies of the same files, so the same config.json): NousResearch's and
///   unsloth's copies, as axolotl's examples name them (`examples/llama-3/*.yml`:
///   `NousResearch/Meta-Llama-3.1-8B`, `NousResearch/Llama-3.2-1B`).
/// - torchtitan's `[model] name` and `flavor`, written `name/flavor` (import reads the two keys
///   into this form): torchtitan 0.3.0's own flavor table, `torchtitan.models.llama3.llama3_configs`,
///   whose models count exactly the preset's parameters (tests/model.rs, the recorded values).
pub const ALIASES: &[(&str, &str)] = &[
    ("meta-llama/Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
    ("meta-llama/Meta-Llama-3.1-70B", "meta-llama/Llama-3.1-70B"),
    (
        "meta-llama/Meta-Llama-3.1-405B",
        "meta-llama/Llama-3.1-405B",
    ),
    ("NousResearch/Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
    (
        "NousResearch/Meta-Llama-3.1-70B",
        "meta-llama/Llama-3.1-70B",
    ),
    ("unsloth/Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
    ("NousResearch/Llama-3.2-1B", "meta-llama/Llama-3.2-1B"),
    ("NousResearch/Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"),
    ("unsloth/Llama-3.2-1B", "meta-llama/Llama-3.2-1B"),
    ("google/gemma-3-1b-it", "google/gemma-3-1b-pt"),
    ("google/gemma-3-270m-it", "google/gemma-3-270m"),
    // Llama 3.3 70B (Instruct only) has Llama 3.1 70B's shape keys: 80 layers, 8192 hidden, 64
    // heads, 8 key/value heads, 28672, 128256 (litgpt's table, citing the Hub's config.json)
    (
        "meta-llama/Llama-3.3-70B-Instruct",
        "meta-llama/Llama-3.1-70B",
    ),
    ("llama3/1B", "meta-llama/Llama-3.2-1B"),
    ("llama3/3B", "meta-llama/Llama-3.2-3B"),
    ("llama3/8B", "meta-llama/Llama-3.1-8B"),
    ("llama3/70B", "meta-llama/Llama-3.1-70B"),
    ("llama3/405B", "meta-llama/Llama-3.1-405B"),
];

/// The preset a model name means: a preset's own Hub id, or one of its [`ALIASES`].
pub fn preset_id(id: &str) -> Option<&'static str> {
    let id = id.trim();
    PRESETS
        .iter()
        .copied()
        .find(|p| *p == id)
        .or_else(|| ALIASES.iter().find(|(a, _)| *a == id).map(|(_, p)| *p))
}

/// A preset by its Hub id (or an alias, [`preset_id`]), with its config.json values.
///
/// Source of every value: the model's config.json on the Hugging Face Hub, as recorded in
/// tests/fixtures/model_presets.json; each count below is
/// transformers 5.24's `num_parameters()` for it, equal to the Hub's published count.
pub fn preset(id: &str) -> Option<Model> {
    use ModelType::*;
    let qwen3 = |m: Model| Model {
        head_dim: Some(128),
        ..m
    };
    let moe = |m: Model, experts: u64, top_k: u64, width: u64| Model {
        num_experts: experts,
        num_experts_per_tok: top_k,
        moe_intermediate_size: width,
        ..m
    };
    Some(match preset_id(id)? {
        // huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json: 8,030,261,248
        "meta-llama/Llama-3.1-8B" => Model::dense(Llama, [4096, 32, 32, 8, 14336, 128256], false),
        // huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json: 70,553,706,496
        "meta-llama/Llama-3.1-70B" => Model::dense(Llama, [8192, 80, 64, 8, 28672, 128256], false),
        // huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json: 405,853,388,800
        "meta-llama/Llama-3.1-405B" => {
            Model::dense(Llama, [16384, 126, 128, 8, 53248, 128256], false)
        }
        // huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json: 1,235,814,400 (tied)
        "meta-llama/Llama-3.2-1B" => Model {
            head_dim: Some(64),
            ..Model::dense(Llama, [2048, 16, 32, 8, 8192, 128256], true)
        },
        // huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json: 494,032,768 (tied, q/k/v bias)
        "Qwen/Qwen2.5-0.5B" => Model::dense(Qwen2, [896, 24, 14, 2, 4864, 151936], true),
        // huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json: 7,615,616,512
        "Qwen/Qwen2.5-7B" => Model::dense(Qwen2, [3584, 28, 28, 4, 18944, 152064], false),
        // huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json: 72,706,203,648
        "Qwen/Qwen2.5-72B" => Model::dense(Qwen2, [8192, 80, 64, 8, 29568, 152064], false),
        // huggingface.co/Qwen/Qwen3-8B/blob/main/config.json: 8,190,735,360
        "Qwen/Qwen3-8B" => qwen3(Model::dense(Qwen3, [4096, 36, 32, 8, 12288, 151936], false)),
        // huggingface.co/Qwen/Qwen3-32B/blob/main/config.json: 32,762,123,264
        "Qwen/Qwen3-32B" => qwen3(Model::dense(Qwen3, [5120, 64, 64, 8, 25600, 151936], false)),
        // huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json: 30,532,122,624
        "Qwen/Qwen3-30B-A3B" => qwen3(moe(
            Model::dense(Qwen3Moe, [2048, 48, 32, 4, 6144, 151936], false),
            128,
            8,
            768,
        )),
        // huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json: 235,093,634,560
        "Qwen/Qwen3-235B-A22B" => qwen3(moe(
            Model::dense(Qwen3Moe, [4096, 94, 64, 4, 12288, 151936], false),
            128,
            8,
            1536,
        )),
        // huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json: 7,241,732,096
        "mistralai/Mistral-7B-v0.1" => {
            Model::dense(Mistral, [4096, 32, 32, 8, 14336, 32000], false)
        }
        // huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json (num_local_experts 8):
        // 46,702,792,704
        "mistralai/Mixtral-8x7B-v0.1" => moe(
            Model::dense(Mixtral, [4096, 32, 32, 8, 14336, 32000], false),
            8,
            2,
            0,
        ),
        // huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json (n_routed_experts 256):
        // 671,026,404,352 without the MTP layer (the Hub's "685B" includes it)
        "deepseek-ai/DeepSeek-V3" => Model {
            n_shared_experts: 1,
            first_k_dense_replace: 3,
            q_lora_rank: Some(1536),
            kv_lora_rank: 512,
            qk_nope_head_dim: 128,
            qk_rope_head_dim: 64,
            v_head_dim: 128,
            ..moe(
                Model::dense(DeepseekV3, [7168, 61, 128, 128, 18432, 129280], false),
                256,
                8,
                2048,
            )
        },
        // huggingface.co/google/gemma-7b/blob/main/config.json: 8,537,680,896 (tied by default)
        "google/gemma-7b" => Model {
            head_dim: Some(256),
            ..Model::dense(Gemma, [3072, 28, 16, 16, 24576, 256000], true)
        },
        // huggingface.co/google/gemma-2-9b/blob/main/config.json: 9,241,705,984 (tied by default)
        "google/gemma-2-9b" => Model {
            head_dim: Some(256),
            ..Model::dense(Gemma2, [3584, 42, 16, 8, 14336, 256000], true)
        },
        // The presets of axolotl's example configs. The Hub was not reachable where they were
        // recorded: each config.json was read from a copy kept in public source (named beside
        // it), and each count is transformers 5.24.0's num_parameters()
        // (tests/fixtures/model_presets.json), equal to the Hub's published size.
        // config.json copies with `"_name_or_path": "meta-llama/Llama-2-7b-hf"` (and -13b-hf,
        // -70b-hf) side by side in one public script: 6,738,415,616
        "meta-llama/Llama-2-7b-hf" => Model::dense(Llama, [4096, 32, 32, 32, 11008, 32000], false),
        // the same script: 13,015,864,320
        "meta-llama/Llama-2-13b-hf" => Model::dense(Llama, [5120, 40, 40, 40, 13824, 32000], false),
        // the same script (GQA, 8 key/value heads): 68,976,648,192
        "meta-llama/Llama-2-70b-hf" => Model::dense(Llama, [8192, 80, 64, 8, 28672, 32000], false),
        // a printed LlamaConfig with `"_name_or_path": "meta-llama/Llama-3.2-3B"` (head_dim 128)
        // and torchtitan 0.3.0's "3B" flavor, which counts the same 3,212,749,824 (tied)
        "meta-llama/Llama-3.2-3B" => Model {
            head_dim: Some(128),
            ..Model::dense(Llama, [3072, 28, 24, 8, 8192, 128256], true)
        },
        // config dicts with `"_name_or_path": "mistralai/Mistral-7B-v0.3"` (vocabulary 32768,
        // v0.1's 32000 + 768 control tokens): 7,248,023,552
        "mistralai/Mistral-7B-v0.3" => {
            Model::dense(Mistral, [4096, 32, 32, 8, 14336, 32768], false)
        }
        // a Qwen3 config dict with `"_name_or_path": "Qwen/Qwen3-4B"` (tied): 4,022,468,096
        "Qwen/Qwen3-4B" => qwen3(Model::dense(Qwen3, [2560, 36, 32, 8, 9728, 151936], true)),
        // a gemma_2_2b config dict beside gemma_2_9b's (tied by default): 2,614,341,888
        "google/gemma-2-2b" => Model {
            head_dim: Some(256),
            ..Model::dense(Gemma2, [2304, 26, 8, 4, 9216, 256000], true)
        },
        // config dicts with `"_name_or_path": "Qwen/Qwen3-0.6B"` (-1.7B, -14B) in public tests;
        // the ties as the Qwen3 model cards count them (0.6B: 0.44B without the embedding)
        "Qwen/Qwen3-0.6B" => qwen3(Model::dense(Qwen3, [1024, 28, 16, 8, 3072, 151936], true)),
        // 1,720,574,976 (tied; the card's 1.4B without the embedding)
        "Qwen/Qwen3-1.7B" => qwen3(Model::dense(Qwen3, [2048, 28, 16, 8, 6144, 151936], true)),
        // 14,768,307,200 (untied)
        "Qwen/Qwen3-14B" => qwen3(Model::dense(Qwen3, [5120, 40, 40, 8, 17408, 151936], false)),
        // a Gemma2ForCausalLM config.json "downloaded from hf", quoted in a public issue, and
        // config dicts beside gemma-2-9b's (head_dim 128): 27,227,128,320
        "google/gemma-2-27b" => Model {
            head_dim: Some(128),
            ..Model::dense(Gemma2, [4608, 46, 32, 16, 36864, 256000], true)
        },
        // a Phi3 config.json copy (transformers 4.40.2, 4k context) in a public test: 3,821,079,552
        "microsoft/Phi-3-mini-4k-instruct" => {
            Model::dense(Phi3, [3072, 32, 32, 32, 8192, 32064], false)
        }
        // a public catalog of Hub configs (Phi-3-medium: 10 key/value heads): 13,960,238,080
        "microsoft/Phi-3-medium-4k-instruct" => {
            Model::dense(Phi3, [5120, 40, 40, 10, 17920, 32064], false)
        }
        // a gemma3_text payload for the 1b checkpoints (-pt and -it) in a public test (tied by
        // default): 999,885,952
        "google/gemma-3-1b-pt" => Model {
            head_dim: Some(256),
            ..Model::dense(Gemma3Text, [1152, 26, 4, 1, 6912, 262144], true)
        },
        // a printed DeepseekV2Config (transformers 5.7.0) of DeepSeek-V2-Lite (q_lora_rank null,
        // n_routed_experts 64): 15,706,484,224
        "deepseek-ai/DeepSeek-V2-Lite" => Model {
            n_shared_experts: 2,
            first_k_dense_replace: 1,
            kv_lora_rank: 512,
            qk_nope_head_dim: 128,
            qk_rope_head_dim: 64,
            v_head_dim: 128,
            ..moe(
                Model::dense(DeepseekV2, [2048, 27, 16, 16, 10944, 102400], false),
                64,
                6,
                1408,
            )
        },
        // the id axolotl's examples train (mistral-community's copy, vocabulary 32000; the later
        // mistralai repository has 32768): MixtralForCausalLM configs with 8 local experts in
        // public tests (transformers 4.40.0.dev0): 140,620,634,112
        "mistral-community/Mixtral-8x22B-v0.1" => moe(
            Model::dense(Mixtral, [6144, 56, 48, 8, 16384, 32000], false),
            8,
            2,
            0,
        ),
        // Qwen2 config dicts for Qwen2.5-14B (48 layers) and -32B (64 layers) in public code,
        // 5120 hidden, 40 heads, 8 key/value heads: 14,770,033,664
        "Qwen/Qwen2.5-14B" => Model::dense(Qwen2, [5120, 48, 40, 8, 13824, 152064], false),
        // 32,763,876,352
        "Qwen/Qwen2.5-32B" => Model::dense(Qwen2, [5120, 64, 40, 8, 27648, 152064], false),
        // the gemma3_text payload for the 270m checkpoints (and -it) beside the 1b one (tied by
        // default): 268,098,176
        "google/gemma-3-270m" => Model {
            head_dim: Some(256),
            ..Model::dense(Gemma3Text, [640, 18, 4, 1, 2048, 262144], true)
        },
        _ => return None,
    })
}

/// Python's `int(a / b)` on two ints (used by the estimators); `None` on a zero divisor.
pub(crate) fn int_of_truediv(a: u128, b: u128) -> Option<u128> {
    let q = num::itruediv(i128::try_from(a).ok()?, i128::try_from(b).ok()?).ok()?;
    match num::int_of(q).ok()? {
        num::Num::Int(i) => u128::try_from(i).ok(),
        num::Num::Float(_) => None,
    }
}
