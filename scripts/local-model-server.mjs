// An OpenAI-compatible chat server for a local GGUF model, on loopback only: the model tier's
// test server and a model for people without an API (`scripts/local-model`, which installs
// node-llama-cpp and the model, pinned, and starts this).
//
// Serves `GET /v1/models` and `POST /v1/chat/completions` (messages, max_tokens, temperature,
// response_format `json_schema` or `json_object`, which become a grammar the model cannot
// leave), answers one request at a time, and reports usage (prompt and completion tokens,
// counted with the model's own tokenizer). With `--log FILE` every request body is appended
// to FILE, one JSON line each: the privacy tests grep what the server received.
//
// Usage: node local-model-server.mjs --model FILE.gguf [--port 0] [--name ID] [--log FILE]
//        [--threads 2] [--context 2048]
// Prints `listening http://127.0.0.1:PORT/v1` once it answers.

import http from "node:http";
import fs from "node:fs";
import { getLlama, LlamaChatSession } from "node-llama-cpp";

function parseArgs(argv) {
  const args = { port: 0, name: "local", log: null, threads: 2, context: 2048, model: null };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    switch (flag) {
      case "--model": args.model = value; break;
      case "--port": args.port = Number(value); break;
      case "--name": args.name = value; break;
      case "--log": args.log = value; break;
      case "--threads": args.threads = Number(value); break;
      case "--context": args.context = Number(value); break;
      default: throw new Error(`unknown flag ${flag}`);
    }
    i += 1;
  }
  if (!args.model) throw new Error("--model FILE.gguf is required");
  return args;
}

const args = parseArgs(process.argv.slice(2));
const MAX_BODY = 1 << 20;
const MAX_TOKENS_CAP = 512;

const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath: args.model });
const context = await model.createContext({ contextSize: args.context, threads: args.threads });
const sequence = context.getSequence();

// One request at a time: the context has one sequence.
let queue = Promise.resolve();
function serially(work) {
  const next = queue.then(work, work);
  queue = next.catch(() => {});
  return next;
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function error(res, status, type, message) {
  send(res, status, { error: { message, type, code: type } });
}

function grammarFor(format) {
  if (!format || typeof format !== "object") return null;
  if (format.type === "json_schema" && format.json_schema && format.json_schema.schema) {
    return llama.createGrammarForJsonSchema(format.json_schema.schema);
  }
  if (format.type === "json_object") return llama.getGrammarFor("json");
  return null;
}

async function complete(request) {
  const messages = Array.isArray(request.messages) ? request.messages : null;
  if (!messages || messages.length === 0) throw Object.assign(new Error("messages must be a non-empty list"), { status: 400 });
  const text = (m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""));
  const system = messages.filter((m) => m.role === "system").map(text).join("\n\n");
  const turns = messages.filter((m) => m.role !== "system");
  const last = turns.pop();
  if (!last || last.role !== "user") throw Object.assign(new Error("the last message must be the user's"), { status: 400 });
  const promptTokens = model.tokenize([system, ...turns.map(text), text(last)].join("\n")).length;
  if (promptTokens + 64 > args.context) {
    throw Object.assign(new Error(`the prompt has ${promptTokens} tokens; this server's context is ${args.context}`), { status: 400, type: "context_length_exceeded" });
  }
  const grammar = await grammarFor(request.response_format);
  const maxTokens = Math.min(Number(request.max_tokens) || 256, MAX_TOKENS_CAP);
  const session = new LlamaChatSession({ contextSequence: sequence, systemPrompt: system || undefined, autoDisposeSequence: false });
  try {
    const history = session.getChatHistory();
    for (const turn of turns) {
      history.push(turn.role === "assistant"
        ? { type: "model", response: [text(turn)] }
        : { type: "user", text: text(turn) });
    }
    session.setChatHistory(history);
    const answer = await session.prompt(text(last), {
      maxTokens,
      temperature: typeof request.temperature === "number" ? request.temperature : 0,
      ...(grammar ? { grammar } : {}),
    });
    const completionTokens = model.tokenize(answer).length;
    return {
      id: `chatcmpl-${Date.now().toString(36)}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: args.name,
      choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: completionTokens >= maxTokens ? "length" : "stop" }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    };
  } finally {
    session.dispose({ disposeSequence: false });
    await sequence.clearHistory();
  }
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/v1/models") {
    send(res, 200, { object: "list", data: [{ id: args.name, object: "model", owned_by: "local" }] });
    return;
  }
  if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
    error(res, 404, "not_found", `no route ${req.method} ${req.url}`);
    return;
  }
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) { error(res, 413, "too_large", "request body over 1 MiB"); req.destroy(); return; }
    chunks.push(chunk);
  });
  req.on("end", () => {
    if (size > MAX_BODY) return;
    const body = Buffer.concat(chunks).toString("utf8");
    if (args.log) fs.appendFileSync(args.log, body.replace(/\n/g, " ") + "\n");
    let request;
    try { request = JSON.parse(body); } catch (e) { error(res, 400, "invalid_json", String(e)); return; }
    serially(() => complete(request)).then(
      (answer) => send(res, 200, answer),
      (e) => error(res, e.status || 500, e.type || (e.status ? "invalid_request_error" : "server_error"), String(e.message || e)),
    );
  });
});

server.listen(args.port, "127.0.0.1", () => {
  const { port } = server.address();
  console.log(`listening http://127.0.0.1:${port}/v1`);
});
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => { server.close(); process.exit(0); });
}
