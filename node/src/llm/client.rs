//! An OpenAI-compatible chat client: `POST {base}/chat/completions`, lenient about the fields
//! servers add or omit. It asks for a JSON answer in a schema (`response_format` of type
//! `json_schema`) and, when a server refuses that field, asks again without it and repairs
//! what comes back ([`extract_json`]); it retries what may pass on a second try (no
//! connection, 429, 5xx) with backoff, and reads the usage of every answer.
//!
//! A server that gives no usage is estimated at 4 bytes a token; every failure is an
//! [`LlmError`] variant.

use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Tries of one question when the server is unreachable or overloaded.
const ATTEMPTS: u32 = 3;
/// Wait before the second try; doubled each time.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// Largest answer body read, in bytes (an answer of a few hundred tokens is a few KiB).
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// Why a question got no usable answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// No connection (refused, reset, DNS).
    #[error("the model server is unreachable: {0}")]
    Unreachable(String),
    /// No answer within the call's time limit.
    #[error("the model server did not answer within {0:?}")]
    Timeout(Duration),
    /// The server answered with an error status.
    #[error("the model server answered {status}: {message}")]
    Status {
        /// HTTP status.
        status: u16,
        /// What it said (cut short).
        message: String,
    },
    /// The answer is not a chat completion, or its content is not the JSON asked for.
    #[error("the model's answer is unusable: {0}")]
    Malformed(String),
}

/// One question: messages, and the JSON schema of the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The system message.
    pub system: String,
    /// The user message.
    pub user: String,
    /// The answer's name and JSON schema.
    pub schema_name: &'static str,
    /// The schema.
    pub schema: Value,
    /// Most completion tokens.
    pub max_tokens: u32,
}

/// A parsed answer and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The answer's JSON.
    pub value: Value,
    /// Prompt tokens (the server's count; estimated at 4 bytes a token when it gives none).
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

/// A client of one endpoint.
#[derive(Debug)]
pub struct ChatClient {
    http: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
    /// Cleared when the server refused `response_format`: later questions go without it.
    schemas: AtomicBool,
}

impl ChatClient {
    /// A client of `base_url` (up to its version, `…/v1`) for `model`.
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Result<ChatClient, LlmError> {
        // reqwest is built without a default crypto provider: rustls takes ring's, once.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| LlmError::Unreachable(format!("cannot build the HTTP client: {e}")))?;
        Ok(ChatClient {
            http,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key,
            timeout,
            schemas: AtomicBool::new(true),
        })
    }

    /// The request body of a question.
    pub fn body(&self, question: &Question, with_schema: bool) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": question.system},
                {"role": "user", "content": question.user},
            ],
            "max_tokens": question.max_tokens,
            "temperature": 0,
        });
        if with_schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": question.schema_name, "schema": question.schema, "strict": true},
            });
        }
        body
    }

    /// Asks one question; the answer's content parsed as JSON.
    pub async fn ask(&self, question: &Question) -> Result<Answer, LlmError> {
        let mut backoff = FIRST_BACKOFF;
        let mut last = LlmError::Unreachable("not asked".into());
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
            let with_schema = self.schemas.load(Ordering::Relaxed);
            match self.post(&self.body(question, with_schema)).await {
                Ok(raw) => return parse_completion(&raw, question),
                Err(LlmError::Status { status, message })
                    if with_schema
                        && (400..500).contains(&status)
                        && status != 429
                        && message.to_lowercase().contains("response_format") =>
                {
                    // A server without structured output: ask again in words, repair after.
                    tracing::info!(%message, "the model server refuses response_format; asking without");
                    self.schemas.store(false, Ordering::Relaxed);
                    last = LlmError::Status { status, message };
                }
                Err(error @ (LlmError::Unreachable(_) | LlmError::Timeout(_))) => last = error,
                Err(LlmError::Status { status, message }) if status == 429 || status >= 500 => {
                    last = LlmError::Status { status, message }
                }
                Err(error) => return Err(error),
            }
        }
        Err(last)
    }

    async fn post(&self, body: &Value) -> Result<String, LlmError> {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let started = Instant::now();
        let response = request
            .send()
            .await
            .map_err(|e| self.transport(e, started))?;
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.transport(e, started))?;
        if bytes.len() > MAX_ANSWER_BYTES {
            return Err(LlmError::Malformed(format!(
                "an answer of {} bytes, at most {MAX_ANSWER_BYTES}",
                bytes.len()
            )));
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if !(200..300).contains(&status) {
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
                .unwrap_or(text);
            return Err(LlmError::Status {
                status,
                message: message.chars().take(300).collect(),
            });
        }
        Ok(text)
    }

    fn transport(&self, error: reqwest::Error, started: Instant) -> LlmError {
        if error.is_timeout() || started.elapsed() >= self.timeout {
            LlmError::Timeout(self.timeout)
        } else {
            LlmError::Unreachable(error.to_string())
        }
    }
}

/// A chat completion's content as JSON, and its usage.
pub fn parse_completion(raw: &str, question: &Question) -> Result<Answer, LlmError> {
    let completion: Value =
        serde_json::from_str(raw).map_err(|e| LlmError::Malformed(format!("not JSON: {e}")))?;
    let message = &completion["choices"][0]["message"];
    let content = message["content"]
        .as_str()
        .or_else(|| completion["choices"][0]["text"].as_str())
        .ok_or_else(|| LlmError::Malformed("no choices[0].message.content".into()))?;
    let value = extract_json(content)
        .ok_or_else(|| LlmError::Malformed(format!("no JSON object in {:?}", cut(content, 120))))?;
    let estimated = |text: &str| (text.len() as u64).div_ceil(4);
    let usage = &completion["usage"];
    Ok(Answer {
        value,
        prompt_tokens: usage["prompt_tokens"]
            .as_u64()
            .unwrap_or_else(|| estimated(&question.system) + estimated(&question.user)),
        completion_tokens: usage["completion_tokens"]
            .as_u64()
            .unwrap_or_else(|| estimated(content)),
    })
}

/// The JSON object in a model's answer: the whole text, or inside a code fence, or the first
/// balanced `{…}` in prose around it.
pub fn extract_json(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        return Some(value);
    }
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(open) = text[start..].find('{').map(|i| i + start) {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                _ if escaped => escaped = false,
                b'\\' if in_string => escaped = true,
                b'"' => in_string = !in_string,
                b'{' if !in_string => depth += 1,
                b'}' if !in_string => {
                    depth -= 1;
                    if depth == 0 {
                        if let Ok(value @ Value::Object(_)) =
                            serde_json::from_str::<Value>(&text[open..=i])
                        {
                            return Some(value);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        start = open + 1;
    }
    None
}

fn cut(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> Question {
        Question {
            system: "s".into(),
            user: "pick one".into(),
            schema_name: "pick",
            schema: json!({"type": "object"}),
            max_tokens: 20,
        }
    }

    #[test]
    fn json_is_found_in_fences_and_prose() {
        assert_eq!(extract_json(r#"{"choice": 2}"#), Some(json!({"choice": 2})));
        assert_eq!(
            extract_json("```json\n{\"done\": true, \"reason\": \"a } in a string\"}\n```"),
            Some(json!({"done": true, "reason": "a } in a string"}))
        );
        assert_eq!(
            extract_json("Sure! {not json} Here: {\"choice\": 1}. Done."),
            Some(json!({"choice": 1}))
        );
        assert_eq!(extract_json("no object [1, 2]"), None);
        assert_eq!(extract_json("{\"open\": "), None);
    }

    #[test]
    fn completions_are_read_leniently() {
        let raw = r#"{"choices":[{"message":{"role":"assistant","content":"{\"choice\": 0}"}}],
                     "usage":{"prompt_tokens":12,"completion_tokens":3,"extra":1},"x":null}"#;
        let answer = parse_completion(raw, &question()).expect("parses");
        assert_eq!(answer.value, json!({"choice": 0}));
        assert_eq!((answer.prompt_tokens, answer.completion_tokens), (12, 3));
        // No usage: estimated from the texts.
        let raw = r#"{"choices":[{"message":{"content":"{\"choice\": 0}"}}]}"#;
        let answer = parse_completion(raw, &question()).expect("parses");
        assert!(answer.prompt_tokens > 0 && answer.completion_tokens > 0);
        for bad in [
            "not json",
            r#"{"choices":[]}"#,
            r#"{"choices":[{"message":{"content":"I think the second one"}}]}"#,
        ] {
            assert!(
                matches!(
                    parse_completion(bad, &question()),
                    Err(LlmError::Malformed(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_body_asks_for_the_schema_until_refused() {
        let client = ChatClient::new("http://127.0.0.1:9/v1/", "m", None, Duration::from_secs(1))
            .expect("client");
        assert_eq!(client.url, "http://127.0.0.1:9/v1/chat/completions");
        let body = client.body(&question(), true);
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(body["messages"][1]["content"], "pick one");
        assert!(
            client
                .body(&question(), false)
                .get("response_format")
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_dead_server_is_unreachable_not_a_hang() {
        // Port 9 (discard) on loopback: nothing listens there.
        let client = ChatClient::new("http://127.0.0.1:9/v1", "m", None, Duration::from_secs(2))
            .expect("client");
        let error = client.ask(&question()).await.expect_err("no server");
        assert!(
            matches!(error, LlmError::Unreachable(_) | LlmError::Timeout(_)),
            "{error}"
        );
    }
}
