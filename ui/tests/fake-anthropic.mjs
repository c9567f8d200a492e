// A minimal fake Anthropic Messages API for the UI's end-to-end scripts: Paige's client sends
// each model call's type in the `x-paige-call-type` header and reads the last text block of
// a Messages response as its structured-output JSON (crates/paige-core/src/api/). Point
// `paige serve` (or the app) at it with ANTHROPIC_BASE_URL=fake.base.
//
//   const fake = await startFakeAnthropic({ replies: { explain_this: promptExample("explain-this") } });
//   …
//   await fake.close();
//
// `replies` maps a call type to its answer (an object, or a function of the parsed request
// body returning one); other call types get a 400, which Paige reports as a failed call.
// `delays` maps a call type to milliseconds to wait before answering, as a model does (its
// 400 too, when `replies` has no answer for it).
// `requests` records every request: {method, url, callType, apiKey, authorization, body, at} (body as
// text, `at` when it arrived);
// a streamed reply's also gets `streamEndedAt` (Date.now() once its message_stop is sent).
//
// `agent(body)` answers the requests that carry no call type: Claude Code's own (the real
// `claude` in the app's terminal, which asks `/v1/messages?beta=true`). It returns a string
// (a text reply) or `toolUse(name, input)` (one tool call); either is streamed when asked.
//
// A `"stream": true` request is answered with the Messages API's server-sent events: its
// reply is `textStream(pieces, pauseMs)` (each piece one text delta, `pauseMs` apart, as a
// model writes) or a string (one delta). A stream request answered with anything else, or a
// plain request answered with a stream, gets a 500: the script is wrong, not Paige.
//
// `comprehensionQuestions` and `comprehensionGrade` answer the comprehension check's two
// call types from the request alone (pass them in `replies`); `reviewQuestion` a spaced
// review's question (its grade is `comprehensionGrade` too).
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const prompts = resolve(dirname(fileURLToPath(import.meta.url)), "../../prompts");

/** The example answer a prompt module ships (`prompts/<name>/example.json`), a fresh copy. */
export function promptExample(name) {
  return JSON.parse(readFileSync(join(prompts, name, "example.json"), "utf8"));
}

/** The user message's text of a parsed request body (string or text blocks). */
export function userText(body) {
  const content = body.messages?.findLast((m) => m.role === "user")?.content;
  if (typeof content === "string") return content;
  return (content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
}

/** The lines a unified diff adds, without their `+`. */
export const addedLines = (diff) => diff.split("\n").filter((l) => l.startsWith("+") && !l.startsWith("+++")).map((l) => l.slice(1));

/** A `comprehension_check` reply from the request alone (issue 30): two questions quoting the
 * first line the learner added in `learner_diff` (Paige drops a question whose quote is not
 * in the diff); none when nothing was added. */
export function comprehensionQuestions(body) {
  const quote = addedLines(JSON.parse(userText(body)).learner_diff).find((l) => l.trim());
  if (!quote) return { questions: [] };
  return {
    questions: [
      { kind: "explain_line", question: "Why did you add this line? What would break without it?", quote, concept: "the line's purpose" },
      { kind: "edge_case", question: "What happens if the value this line sets changes later?", quote, concept: "shared state" },
    ],
  };
}

/** A `comprehension_grade` reply from the request alone: an answer with "because" in it is
 * graded correct, any other incorrect. */
export function comprehensionGrade(body) {
  const { learner_answer: answer, question } = JSON.parse(userText(body));
  const right = /\bbecause\b/i.test(answer);
  const why = right ? "Right: you said what the line is for." : "That does not say what the line does.";
  return { grade: right ? "correct" : "incorrect", why, concept: question.concept };
}

/** A `review_question` reply from the request alone (issue 31): a question quoting the review
 * item's topic (`item.topic` of the user message), about it as the concept. */
export function reviewQuestion(body) {
  const { item } = JSON.parse(userText(body));
  return { question: `In a sentence or two: what is “${item.topic}”, and why does it matter in your code?`, concept: item.topic };
}

const STREAM = Symbol("text stream");
const TOOL = Symbol("tool use");

/** An `agent` reply: the model calls tool `name` with `input` and stops for its result
 * (`id`: the call's id, for a model that calls the same tool twice in one conversation). */
export function toolUse(name, input, id = `toolu_fake_${name}`) {
  return { [TOOL]: { type: "tool_use", id, name, input } };
}

/** What the model was just told: the text of the request's last user message (not its tool
 * results) and the context that prompt's UserPromptSubmit hook attached, which Claude Code
 * sends in a trailing system message after its label (not SessionStart's: background). */
export function lastUserText(body) {
  const messages = body.messages ?? [];
  const last = messages.findLastIndex((m) => m.role === "user");
  if (last < 0) return "";
  const text = (content) =>
    typeof content === "string" ? content : (content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
  const prompt = text(messages[last].content);
  // A tool's result is not a prompt: nothing new was said, whatever context is still attached.
  if (!prompt.trim()) return "";
  const attached = messages
    .slice(last)
    .map((m) => text(m.content).split("UserPromptSubmit hook additional context:")[1] ?? "")
    .join("\n");
  return `${prompt}\n${attached}`;
}


/** A streamed text reply: `pieces` are its text deltas, each sent `pauseMs` after the one
 * before (a piece may be `{text, pauseMs}` to wait its own time before it). */
export function textStream(pieces, pauseMs = 0) {
  return { [STREAM]: pieces.map((p) => (typeof p === "string" ? { text: p, pauseMs } : { pauseMs, ...p })) };
}

/** Writes `message` with the text `pieces` as the Messages API streams it (or, given `tool`,
 * that tool call as one `input_json_delta`); `done` after message_stop. A client that hangs
 * up stops the writing. */
async function writeStream(res, message, pieces, done, tool = null) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const event = (name, data) => {
    if (!res.destroyed) res.write(`event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`);
  };
  event("message_start", { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 120, output_tokens: 1 } } });
  if (tool) {
    event("content_block_start", { index: 0, content_block: { ...tool, input: {} } });
    event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(tool.input) } });
  } else {
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    event("ping", {});
    for (const { text, pauseMs } of pieces) {
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      if (res.destroyed) return;
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text } });
    }
  }
  event("content_block_stop", { index: 0 });
  event("message_delta", { delta: { stop_reason: tool ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 80 } });
  event("message_stop", {});
  done();
  res.end();
}

export function startFakeAnthropic({ replies = {}, delays = {}, agent = null } = {}) {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const callType = req.headers["x-paige-call-type"] ?? null;
      const request = { method: req.method, url: req.url, callType, apiKey: req.headers["x-api-key"], authorization: req.headers.authorization, body, at: Date.now() };
      requests.push(request);
      const send = (status, value) => {
        if (res.destroyed) return;
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      const error = (status, type, message) => send(status, { type: "error", error: { type, message } });
      const later = (answer) => setTimeout(answer, delays[callType] ?? 0);
      const answerAgent = (body, answer) => {
        const tool = answer?.[TOOL] ?? null;
        const text = tool ? null : String(answer);
        const content = tool ? [tool] : [{ type: "text", text }];
        const message = { id: `msg_fake_${requests.length}`, type: "message", role: "assistant", model: body.model, content,
          stop_reason: tool ? "tool_use" : "end_turn", stop_sequence: null, usage: { input_tokens: 120, output_tokens: 80 } };
        if (body.stream === true) return writeStream(res, message, [{ text, pauseMs: 0 }], () => (request.streamEndedAt = Date.now()), tool);
        send(200, message);
      };
      if (req.method === "GET" && req.url.startsWith("/v1/models")) {
        return send(200, { data: [{ type: "model", id: "claude-sonnet-4-5", display_name: "Sonnet", created_at: "2025-09-29T00:00:00Z" }], has_more: false });
      }
      const path = req.url.split("?")[0];
      if (req.method !== "POST" || path !== "/v1/messages") return error(404, "not_found_error", req.url);
      let parsed;
      try {
        parsed = JSON.parse(body);
      } catch {
        return error(400, "invalid_request_error", "the body is not JSON");
      }
      if (callType === null && agent) {
        let answer;
        try {
          answer = agent(parsed);
        } catch (err) {
          return error(500, "api_error", `the fake's agent reply threw: ${err}`);
        }
        return answerAgent(parsed, answer);
      }
      const reply = replies[callType];
      if (reply === undefined) return later(() => error(400, "invalid_request_error", `the fake does not answer ${callType}`));
      let answer;
      try {
        answer = typeof reply === "function" ? reply(parsed) : reply;
      } catch (err) {
        return error(500, "api_error", `the fake's ${callType} reply threw: ${err}`);
      }
      const streamed = parsed.stream === true;
      const pieces = typeof answer === "string" ? [{ text: answer, pauseMs: 0 }] : answer?.[STREAM];
      if (streamed ? pieces === undefined : answer?.[STREAM] !== undefined) {
        const want = streamed ? "a textStream or string reply" : "a JSON reply, not a stream";
        return error(500, "api_error", `the fake's ${callType} reply does not fit the request: it needs ${want}`);
      }
      const message = {
        id: `msg_fake_${requests.length}`,
        type: "message",
        role: "assistant",
        model: parsed.model,
        content: [{ type: "text", text: JSON.stringify(answer) }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 120, output_tokens: 80 },
      };
      if (streamed) return later(() => writeStream(res, message, pieces, () => (request.streamEndedAt = Date.now())));
      later(() => send(200, message));
    });
  });
  return new Promise((ready, failed) => {
    server.once("error", failed);
    server.listen(0, "127.0.0.1", () =>
      ready({
        server,
        requests,
        base: `http://127.0.0.1:${server.address().port}`,
        /** The requests of one call type, their bodies parsed. */
        callsOf: (callType) => requests.filter((r) => r.callType === callType).map((r) => ({ ...r, body: JSON.parse(r.body) })),
        close: () => new Promise((done) => {
          server.closeAllConnections?.();
          server.close(() => done());
        }),
      }),
    );
  });
}
