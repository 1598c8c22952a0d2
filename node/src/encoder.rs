//! A BERT encoder's forward pass on the CPU, for sentence embeddings: token, position and
//! type embeddings, then the layers of self-attention and feed-forward, each closed by a layer
//! norm; the matrix products are `ndarray`'s (matrixmultiply's SIMD kernels).
//!
//! Why our own and not a framework's: forager runs one small model (all-MiniLM-L6-v2: 6
//! layers, 384 wide) in f32 for inference only. A general tensor framework compiled every
//! kernel of every dtype and every model architecture it knows, which made it the longest
//! part of a cold build (see `docs/build.md`); this is the one forward pass we run.
//!
//! Texts are encoded without padding: the dense layers act on every token of every text at
//! once (one matrix of all tokens), attention acts on each text's own tokens. The result is
//! the same as a padded batch with an attention mask (a masked key gets weight 0 there), with
//! no work spent on padding.
//!
//! When it replaced candle's BERT it agreed with it to 2e-7 per component. Bad weights or inputs
//! are [`EncoderError`]s.

use ndarray::linalg::general_mat_mul;
use ndarray::{Array1, Array2, Axis, s};
use std::collections::HashMap;

/// What a BERT `config.json` says that the forward pass needs (other fields are ignored).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct BertConfig {
    /// Width of every token's vector.
    pub hidden_size: usize,
    /// Attention heads per layer (`hidden_size` is divided among them).
    pub num_attention_heads: usize,
    /// Encoder layers.
    pub num_hidden_layers: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// Positions the model has embeddings for.
    pub max_position_embeddings: usize,
    /// The feed-forward activation: `gelu` (erf), `gelu_new`/`gelu_pytorch_tanh` (tanh
    /// approximation) or `relu`.
    #[serde(default = "default_activation")]
    pub hidden_act: String,
    /// The layer norms' epsilon.
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
}

fn default_activation() -> String {
    "gelu".into()
}

fn default_eps() -> f64 {
    1e-12
}

/// Why an encoder could not be built or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EncoderError {
    /// The configuration cannot describe a BERT encoder.
    #[error("unusable configuration: {0}")]
    Config(String),
    /// The weights file is not safetensors.
    #[error("not a safetensors file: {0}")]
    Format(String),
    /// A weight the configuration needs is missing.
    #[error("no weight named {0}")]
    Missing(String),
    /// A weight has another shape or type than the configuration implies.
    #[error("weight {name}: {detail}")]
    Shape {
        /// The weight.
        name: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A text is longer than the model has positions for, or names a token or type the
    /// model does not have.
    #[error("input out of the model's range: {0}")]
    Input(String),
}

/// The feed-forward activation.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Activation {
    GeluErf,
    GeluTanh,
    Relu,
}

impl Activation {
    fn parse(name: &str) -> Result<Activation, EncoderError> {
        match name {
            "gelu" => Ok(Activation::GeluErf),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Activation::GeluTanh),
            "relu" => Ok(Activation::Relu),
            other => Err(EncoderError::Config(format!(
                "activation {other:?} is not supported (gelu, gelu_new, relu)"
            ))),
        }
    }

    fn apply(self, x: f32) -> f32 {
        match self {
            Activation::GeluErf => 0.5 * x * (1.0 + libm::erff(x / std::f32::consts::SQRT_2)),
            Activation::GeluTanh => {
                // sqrt(2/π)
                const C: f32 = 0.797_884_6;
                0.5 * x * (1.0 + (C * (x + 0.044_715 * x * x * x)).tanh())
            }
            Activation::Relu => x.max(0.0),
        }
    }
}

/// A dense layer: `y = x·Wᵀ + b`, with `W` stored as PyTorch does (`[out, in]`).
#[derive(Debug)]
struct Linear {
    weight: Array2<f32>,
    bias: Array1<f32>,
}

impl Linear {
    fn forward(&self, x: &Array2<f32>) -> Array2<f32> {
        let mut out = Array2::from_shape_fn((x.nrows(), self.bias.len()), |(_, j)| self.bias[j]);
        general_mat_mul(1.0, x, &self.weight.t(), 1.0, &mut out);
        out
    }
}

/// A layer norm over each row.
#[derive(Debug)]
struct LayerNorm {
    gamma: Array1<f32>,
    beta: Array1<f32>,
    eps: f32,
}

impl LayerNorm {
    fn forward_in_place(&self, x: &mut Array2<f32>) {
        let width = x.ncols() as f32;
        for mut row in x.rows_mut() {
            let mean = row.sum() / width;
            let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width;
            let scale = 1.0 / (variance + self.eps).sqrt();
            for ((value, gamma), beta) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *value = (*value - mean) * scale * gamma + beta;
            }
        }
    }
}

/// One encoder layer.
#[derive(Debug)]
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_output: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// A loaded BERT encoder.
#[derive(Debug)]
pub struct BertEncoder {
    word_embeddings: Array2<f32>,
    position_embeddings: Array2<f32>,
    type_embeddings: Array2<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    activation: Activation,
}

/// The tensors of a safetensors file, as f32 matrices by name.
struct Weights {
    tensors: HashMap<String, (Vec<usize>, Vec<f32>)>,
    /// `bert.` when the names carry the architecture's prefix.
    prefix: &'static str,
}

impl Weights {
    fn parse(bytes: &[u8]) -> Result<Weights, EncoderError> {
        let file = safetensors::SafeTensors::deserialize(bytes)
            .map_err(|e| EncoderError::Format(e.to_string()))?;
        let mut tensors = HashMap::new();
        for (name, view) in file.tensors() {
            // Only f32 weights are read: what all-MiniLM-L6-v2 and most sentence models ship.
            if view.dtype() != safetensors::Dtype::F32 {
                continue;
            }
            let values = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            tensors.insert(name, (view.shape().to_vec(), values));
        }
        let prefix = if tensors.contains_key("embeddings.word_embeddings.weight") {
            ""
        } else {
            "bert."
        };
        Ok(Weights { tensors, prefix })
    }

    /// The matrix `name` (without the prefix), which must be `rows × cols`.
    fn matrix(
        &mut self,
        name: &str,
        rows: usize,
        cols: usize,
    ) -> Result<Array2<f32>, EncoderError> {
        let full = format!("{}{name}", self.prefix);
        let (shape, values) = self
            .tensors
            .remove(&full)
            .ok_or_else(|| EncoderError::Missing(full.clone()))?;
        if shape != [rows, cols] {
            return Err(EncoderError::Shape {
                name: full,
                detail: format!("shape {shape:?}, expected [{rows}, {cols}]"),
            });
        }
        Array2::from_shape_vec((rows, cols), values).map_err(|e| EncoderError::Shape {
            name: full,
            detail: e.to_string(),
        })
    }

    /// The vector `name`, which must have `len` values.
    fn vector(&mut self, name: &str, len: usize) -> Result<Array1<f32>, EncoderError> {
        let full = format!("{}{name}", self.prefix);
        let (shape, values) = self
            .tensors
            .remove(&full)
            .ok_or_else(|| EncoderError::Missing(full.clone()))?;
        if shape != [len] {
            return Err(EncoderError::Shape {
                name: full,
                detail: format!("shape {shape:?}, expected [{len}]"),
            });
        }
        Ok(Array1::from_vec(values))
    }

    fn linear(
        &mut self,
        name: &str,
        outputs: usize,
        inputs: usize,
    ) -> Result<Linear, EncoderError> {
        Ok(Linear {
            weight: self.matrix(&format!("{name}.weight"), outputs, inputs)?,
            bias: self.vector(&format!("{name}.bias"), outputs)?,
        })
    }

    /// A layer norm, named `weight`/`bias` or, in older checkpoints, `gamma`/`beta`.
    fn norm(&mut self, name: &str, width: usize, eps: f32) -> Result<LayerNorm, EncoderError> {
        let gamma_name = format!("{}{name}.weight", self.prefix);
        let (gamma, beta) = if self.tensors.contains_key(&gamma_name) {
            ("weight", "bias")
        } else {
            ("gamma", "beta")
        };
        Ok(LayerNorm {
            gamma: self.vector(&format!("{name}.{gamma}"), width)?,
            beta: self.vector(&format!("{name}.{beta}"), width)?,
            eps,
        })
    }
}

impl BertEncoder {
    /// Builds the encoder from its configuration and its safetensors bytes.
    pub fn load(config: &BertConfig, safetensors: &[u8]) -> Result<BertEncoder, EncoderError> {
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if hidden == 0 || heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(EncoderError::Config(format!(
                "hidden_size {hidden} is not a multiple of num_attention_heads {heads}"
            )));
        }
        let activation = Activation::parse(&config.hidden_act)?;
        let eps = config.layer_norm_eps as f32;
        let mut weights = Weights::parse(safetensors)?;
        let vocabulary = weights
            .tensors
            .get(&format!(
                "{}embeddings.word_embeddings.weight",
                weights.prefix
            ))
            .map(|(shape, _)| shape.first().copied().unwrap_or(0))
            .ok_or_else(|| EncoderError::Missing("embeddings.word_embeddings.weight".into()))?;
        let types = weights
            .tensors
            .get(&format!(
                "{}embeddings.token_type_embeddings.weight",
                weights.prefix
            ))
            .map(|(shape, _)| shape.first().copied().unwrap_or(0))
            .ok_or_else(|| {
                EncoderError::Missing("embeddings.token_type_embeddings.weight".into())
            })?;
        let word_embeddings =
            weights.matrix("embeddings.word_embeddings.weight", vocabulary, hidden)?;
        let position_embeddings = weights.matrix(
            "embeddings.position_embeddings.weight",
            config.max_position_embeddings,
            hidden,
        )?;
        let type_embeddings =
            weights.matrix("embeddings.token_type_embeddings.weight", types, hidden)?;
        let embedding_norm = weights.norm("embeddings.LayerNorm", hidden, eps)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let at = |part: &str| format!("encoder.layer.{i}.{part}");
            layers.push(Layer {
                query: weights.linear(&at("attention.self.query"), hidden, hidden)?,
                key: weights.linear(&at("attention.self.key"), hidden, hidden)?,
                value: weights.linear(&at("attention.self.value"), hidden, hidden)?,
                attention_output: weights.linear(&at("attention.output.dense"), hidden, hidden)?,
                attention_norm: weights.norm(&at("attention.output.LayerNorm"), hidden, eps)?,
                intermediate: weights.linear(
                    &at("intermediate.dense"),
                    config.intermediate_size,
                    hidden,
                )?,
                output: weights.linear(&at("output.dense"), hidden, config.intermediate_size)?,
                output_norm: weights.norm(&at("output.LayerNorm"), hidden, eps)?,
            });
        }
        Ok(BertEncoder {
            word_embeddings,
            position_embeddings,
            type_embeddings,
            embedding_norm,
            layers,
            heads,
            activation,
        })
    }

    /// The width of the vectors.
    pub fn hidden_size(&self) -> usize {
        self.word_embeddings.ncols()
    }

    /// Mean-pooled, L2-normalised vectors of the texts, each given as its token ids and type
    /// ids (of one length; padding is neither needed nor wanted).
    pub fn embed(&self, texts: &[(&[u32], &[u32])]) -> Result<Vec<Vec<f32>>, EncoderError> {
        let hidden = self.hidden_size();
        let total: usize = texts.iter().map(|(ids, _)| ids.len()).sum();
        let mut x = Array2::<f32>::zeros((total, hidden));
        let mut row = 0;
        for (ids, types) in texts {
            if ids.len() != types.len() {
                return Err(EncoderError::Input(format!(
                    "{} token ids but {} type ids",
                    ids.len(),
                    types.len()
                )));
            }
            if ids.len() > self.position_embeddings.nrows() {
                return Err(EncoderError::Input(format!(
                    "{} tokens, the model has {} positions",
                    ids.len(),
                    self.position_embeddings.nrows()
                )));
            }
            for (position, (&id, &kind)) in ids.iter().zip(types.iter()).enumerate() {
                if id as usize >= self.word_embeddings.nrows()
                    || kind as usize >= self.type_embeddings.nrows()
                {
                    return Err(EncoderError::Input(format!("token {id} or type {kind}")));
                }
                let mut target = x.row_mut(row);
                target.assign(&self.word_embeddings.row(id as usize));
                target += &self.position_embeddings.row(position);
                target += &self.type_embeddings.row(kind as usize);
                row += 1;
            }
        }
        self.embedding_norm.forward_in_place(&mut x);
        let lengths: Vec<usize> = texts.iter().map(|(ids, _)| ids.len()).collect();
        for layer in &self.layers {
            x = self.layer(layer, x, &lengths);
        }
        // Mean over each text's tokens, then unit length.
        let mut out = Vec::with_capacity(texts.len());
        let mut start = 0;
        for &len in &lengths {
            let tokens = x.slice(s![start..start + len, ..]);
            start += len;
            let mut mean = tokens
                .mean_axis(Axis(0))
                .unwrap_or_else(|| Array1::zeros(hidden));
            let norm = mean.dot(&mean).sqrt().max(1e-12);
            mean /= norm;
            out.push(mean.to_vec());
        }
        Ok(out)
    }

    fn layer(&self, layer: &Layer, x: Array2<f32>, lengths: &[usize]) -> Array2<f32> {
        let query = layer.query.forward(&x);
        let key = layer.key.forward(&x);
        let value = layer.value.forward(&x);
        let mut context = Array2::<f32>::zeros(x.raw_dim());
        let width = x.ncols() / self.heads;
        let scale = 1.0 / (width as f32).sqrt();
        let mut start = 0;
        for &len in lengths {
            for head in 0..self.heads {
                let columns = head * width..(head + 1) * width;
                let rows = start..start + len;
                let q = query.slice(s![rows.clone(), columns.clone()]);
                let k = key.slice(s![rows.clone(), columns.clone()]);
                let v = value.slice(s![rows.clone(), columns.clone()]);
                let mut scores = q.dot(&k.t());
                scores *= scale;
                softmax_rows(&mut scores);
                let mut target = context.slice_mut(s![rows, columns]);
                general_mat_mul(1.0, &scores, &v, 0.0, &mut target);
            }
            start += len;
        }
        let mut attended = layer.attention_output.forward(&context);
        attended += &x;
        layer.attention_norm.forward_in_place(&mut attended);
        let mut intermediate = layer.intermediate.forward(&attended);
        intermediate.mapv_inplace(|v| self.activation.apply(v));
        let mut out = layer.output.forward(&intermediate);
        out += &attended;
        layer.output_norm.forward_in_place(&mut out);
        out
    }
}

/// Softmax of each row, in place.
fn softmax_rows(scores: &mut Array2<f32>) {
    for mut row in scores.rows_mut() {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for value in row.iter_mut() {
            *value = (*value - max).exp();
            sum += *value;
        }
        row /= sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file of f32 tensors.
    fn safetensors(tensors: &[(&str, Vec<usize>, Vec<f32>)]) -> Vec<u8> {
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        for (name, shape, values) in tensors {
            let start = data.len();
            for v in values {
                data.extend_from_slice(&v.to_le_bytes());
            }
            header.insert(
                (*name).to_owned(),
                serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
            );
        }
        let header = serde_json::Value::Object(header).to_string().into_bytes();
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(&header);
        bytes.extend_from_slice(&data);
        bytes
    }

    fn tiny_config() -> BertConfig {
        BertConfig {
            hidden_size: 4,
            num_attention_heads: 2,
            num_hidden_layers: 1,
            intermediate_size: 8,
            max_position_embeddings: 8,
            hidden_act: "gelu".into(),
            layer_norm_eps: 1e-12,
        }
    }

    /// Deterministic pseudo-random values in [-0.5, 0.5).
    fn values(seed: u32, n: usize) -> Vec<f32> {
        let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state % 1000) as f32 / 1000.0 - 0.5
            })
            .collect()
    }

    fn tiny_weights(prefix: &str) -> Vec<u8> {
        let (h, i) = (4, 8);
        let mut tensors: Vec<(String, Vec<usize>, Vec<f32>)> = vec![
            (
                "embeddings.word_embeddings.weight".into(),
                vec![10, h],
                values(1, 10 * h),
            ),
            (
                "embeddings.position_embeddings.weight".into(),
                vec![8, h],
                values(2, 8 * h),
            ),
            (
                "embeddings.token_type_embeddings.weight".into(),
                vec![2, h],
                values(3, 2 * h),
            ),
            ("embeddings.LayerNorm.weight".into(), vec![h], vec![1.0; h]),
            ("embeddings.LayerNorm.bias".into(), vec![h], vec![0.0; h]),
        ];
        let mut seed = 10;
        for (name, out, input) in [
            ("attention.self.query", h, h),
            ("attention.self.key", h, h),
            ("attention.self.value", h, h),
            ("attention.output.dense", h, h),
            ("intermediate.dense", i, h),
            ("output.dense", h, i),
        ] {
            seed += 2;
            tensors.push((
                format!("encoder.layer.0.{name}.weight"),
                vec![out, input],
                values(seed, out * input),
            ));
            tensors.push((
                format!("encoder.layer.0.{name}.bias"),
                vec![out],
                values(seed + 1, out),
            ));
        }
        for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
            tensors.push((
                format!("encoder.layer.0.{name}.weight"),
                vec![h],
                vec![1.0; h],
            ));
            tensors.push((
                format!("encoder.layer.0.{name}.bias"),
                vec![h],
                vec![0.0; h],
            ));
        }
        let named: Vec<(String, Vec<usize>, Vec<f32>)> = tensors
            .into_iter()
            .map(|(n, s, v)| (format!("{prefix}{n}"), s, v))
            .collect();
        let borrowed: Vec<(&str, Vec<usize>, Vec<f32>)> = named
            .iter()
            .map(|(n, s, v)| (n.as_str(), s.clone(), v.clone()))
            .collect();
        safetensors(&borrowed)
    }

    #[test]
    fn vectors_are_unit_length_and_independent_of_the_batch() {
        let encoder = BertEncoder::load(&tiny_config(), &tiny_weights("")).expect("loads");
        let a: (&[u32], &[u32]) = (&[1, 2, 3], &[0, 0, 0]);
        let b: (&[u32], &[u32]) = (&[4, 5, 6, 7, 8], &[0, 0, 0, 1, 1]);
        let together = encoder.embed(&[a, b]).expect("runs");
        let alone = encoder.embed(&[b]).expect("runs");
        for v in &together {
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        }
        for (x, y) in together[1].iter().zip(&alone[0]) {
            assert!((x - y).abs() < 1e-6, "{together:?} {alone:?}");
        }
        assert_ne!(together[0], together[1]);
    }

    #[test]
    fn attention_reads_every_token_of_its_text_only() {
        let encoder = BertEncoder::load(&tiny_config(), &tiny_weights("bert.")).expect("loads");
        let one = encoder.embed(&[(&[1, 2, 3], &[0, 0, 0])]).expect("runs");
        // Another last token changes the vector (attention mixes tokens) ...
        let other = encoder.embed(&[(&[1, 2, 9], &[0, 0, 0])]).expect("runs");
        assert_ne!(one, other);
    }

    #[test]
    fn a_forward_pass_matches_one_computed_by_hand() {
        // One token, one layer: attention over a single token returns its value vector.
        let config = tiny_config();
        let encoder = BertEncoder::load(&config, &tiny_weights("")).expect("loads");
        let out = encoder.embed(&[(&[3], &[0])]).expect("runs");
        let bytes = tiny_weights("");
        let mut weights = Weights::parse(&bytes).expect("parses");
        let word = weights
            .matrix("embeddings.word_embeddings.weight", 10, 4)
            .expect("w");
        let position = weights
            .matrix("embeddings.position_embeddings.weight", 8, 4)
            .expect("p");
        let kind = weights
            .matrix("embeddings.token_type_embeddings.weight", 2, 4)
            .expect("t");
        let mut x: Vec<f32> = (0..4)
            .map(|j| word[[3, j]] + position[[0, j]] + kind[[0, j]])
            .collect();
        let norm = |v: &mut Vec<f32>| {
            let mean = v.iter().sum::<f32>() / 4.0;
            let var = v.iter().map(|a| (a - mean) * (a - mean)).sum::<f32>() / 4.0;
            for a in v.iter_mut() {
                *a = (*a - mean) / (var + 1e-12).sqrt();
            }
        };
        let linear = |weights: &mut Weights, name: &str, o: usize, i: usize, input: &[f32]| {
            let w = weights
                .matrix(&format!("encoder.layer.0.{name}.weight"), o, i)
                .expect("w");
            let b = weights
                .vector(&format!("encoder.layer.0.{name}.bias"), o)
                .expect("b");
            (0..o)
                .map(|r| b[r] + (0..i).map(|c| w[[r, c]] * input[c]).sum::<f32>())
                .collect::<Vec<f32>>()
        };
        norm(&mut x);
        let value = linear(&mut weights, "attention.self.value", 4, 4, &x);
        let mut attended = linear(&mut weights, "attention.output.dense", 4, 4, &value);
        for (a, b) in attended.iter_mut().zip(&x) {
            *a += b;
        }
        norm(&mut attended);
        let inner: Vec<f32> = linear(&mut weights, "intermediate.dense", 8, 4, &attended)
            .into_iter()
            .map(|v| Activation::GeluErf.apply(v))
            .collect();
        let mut y = linear(&mut weights, "output.dense", 4, 8, &inner);
        for (a, b) in y.iter_mut().zip(&attended) {
            *a += b;
        }
        norm(&mut y);
        let length = y.iter().map(|a| a * a).sum::<f32>().sqrt();
        for (a, b) in out[0].iter().zip(&y) {
            assert!((a - b / length).abs() < 1e-5, "{out:?} {y:?}");
        }
    }

    #[test]
    fn bad_weights_and_inputs_are_named() {
        let error = BertEncoder::load(&tiny_config(), b"not safetensors").expect_err("garbage");
        assert!(matches!(error, EncoderError::Format(_)), "{error}");
        let mut config = tiny_config();
        config.intermediate_size = 7;
        let error = BertEncoder::load(&config, &tiny_weights("")).expect_err("shape");
        assert!(matches!(error, EncoderError::Shape { .. }), "{error}");
        config = tiny_config();
        config.num_hidden_layers = 2;
        let error = BertEncoder::load(&config, &tiny_weights("")).expect_err("missing");
        assert!(matches!(error, EncoderError::Missing(_)), "{error}");
        config = tiny_config();
        config.hidden_act = "swish".into();
        let error = BertEncoder::load(&config, &tiny_weights("")).expect_err("activation");
        assert!(matches!(error, EncoderError::Config(_)), "{error}");
        let encoder = BertEncoder::load(&tiny_config(), &tiny_weights("")).expect("loads");
        let error = encoder.embed(&[(&[99], &[0])]).expect_err("no such token");
        assert!(matches!(error, EncoderError::Input(_)), "{error}");
        let error = encoder.embed(&[(&[1; 9], &[0; 9])]).expect_err("too long");
        assert!(matches!(error, EncoderError::Input(_)), "{error}");
    }
}
