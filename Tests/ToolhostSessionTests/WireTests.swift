import Foundation
import Testing
import ToolhostCore
import ToolhostEventStream
import ToolhostJSON
import ToolhostOpenAI
import ToolhostSession
import ToolhostTestSupport

@Suite("Server-Sent Events")
struct ServerSentEventTests {
  func parse(_ chunks: [String]) -> [ServerSentEventParser.Event] {
    var parser = ServerSentEventParser()
    var events: [ServerSentEventParser.Event] = []
    for c in chunks { events += parser.feed(Array(c.utf8)) }
    return events + parser.finish()
  }

  @Test func eventsSplitAnywhere() {
    let stream = "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n: keep-alive\n\ndata: [DONE]\n\n"
    let whole = parse([stream])
    #expect(whole.map(\.data) == ["{\"a\":1}", "{\"b\":2}", "[DONE]"])
    // Every split point, byte by byte, gives the same events.
    let bytes = Array(stream)
    for cut in 1..<bytes.count {
      #expect(parse([String(bytes[..<cut]), String(bytes[cut...])]) == whole)
    }
    #expect(parse(bytes.map { String($0) }) == whole)
  }

  @Test func lineEndingsCRLFAndCR() {
    #expect(parse(["data: x\r\n\r\ndata: y\r\rdata: z\n\n"]).map(\.data) == ["x", "y", "z"])
    // \r\n split between chunks is one line ending, not two.
    #expect(parse(["data: x\r", "\ndata: y\r", "\n\r", "\n"]).map(\.data) == ["x\ny"])
  }

  @Test func fieldsAndMultilineData() {
    let events = parse([
      "\u{FEFF}event: delta\nid: 7\ndata: one\ndata:two\nretry: 10\nunknown: z\n\n"
    ])
    #expect(events == [ServerSentEventParser.Event(event: "delta", data: "one\ntwo", id: "7")])
    #expect(parse(["data\n\n"]).map(\.data) == [""])
    #expect(parse([": only a comment\n\n"]).isEmpty)
  }

  @Test func unterminatedLastEventIsKept() {
    #expect(parse(["data: {\"x\":1}"]).map(\.data) == ["{\"x\":1}"])
  }
}

@Suite("Tool-call delta assembly")
struct DeltaAssemblyTests {
  func assemble(_ deltas: [JSONValue]) -> [Transcript.ToolCall] {
    var a = ToolCallAssembler()
    for d in deltas { a.add(d) }
    return a.calls()
  }

  func start(_ index: Int?, _ id: String?, _ name: String, _ args: String = "") -> JSONValue {
    var o: JSONObject = [
      "type": "function", "function": ["name": .string(name), "arguments": .string(args)],
    ]
    if let index { o["index"] = .integer(Int64(index)) }
    if let id { o["id"] = .string(id) }
    return .object(o)
  }

  func more(_ index: Int?, _ args: String) -> JSONValue {
    var o: JSONObject = ["function": ["arguments": .string(args)]]
    if let index { o["index"] = .integer(Int64(index)) }
    return .object(o)
  }

  @Test func openAIStyleFragmentsOfTwoCalls() {
    let calls = assemble([
      start(0, "call_a", "getWeather"), more(0, "{\"ci"), more(0, "ty\": \"Bos"), more(0, "ton\"}"),
      start(1, "call_b", "add"), more(1, "{\"a\": 1,"), more(1, " \"b\": 2}"),
    ])
    #expect(calls.map(\.id) == ["call_a", "call_b"])
    #expect(calls.map(\.toolName) == ["getWeather", "add"])
    #expect(calls[0].arguments == ["city": "Boston"])
    #expect(calls[1].arguments == ["a": 1, "b": 2])
    #expect(calls.allSatisfy { $0.argumentsText == nil })
  }

  @Test func interleavedFragmentsByIndex() {
    let calls = assemble([
      start(0, "x", "f"), start(1, "y", "g"), more(1, "{\"b\":"), more(0, "{\"a\":"), more(0, "1}"),
      more(1, "2}"),
    ])
    #expect(calls.map(\.arguments) == [["a": 1], ["b": 2]])
  }

  @Test func serverReusesIndexZeroWithNewIDs() {
    let calls = assemble([
      start(0, "c1", "f"), more(0, "{\"a\":"), more(0, "1}"), start(0, "c2", "f"),
      more(0, "{\"a\":"), more(0, "2}"),
    ])
    #expect(calls.map(\.id) == ["c1", "c2"])
    #expect(calls.map(\.arguments) == [["a": 1], ["a": 2]])
  }

  @Test func serverOmitsIndex() {
    let calls = assemble([
      start(nil, "c1", "f"), more(nil, "{\"a\""), more(nil, ":1}"), start(nil, "c2", "g"),
      more(nil, "{}"),
    ])
    #expect(calls.map(\.id) == ["c1", "c2"])
    #expect(calls.map(\.toolName) == ["f", "g"])
    #expect(calls.map(\.arguments) == [["a": 1], [:]])
  }

  @Test func noIndexAndNoIDsTellCallsApartByName() {
    let calls = assemble([
      start(nil, nil, "f"), more(nil, "{\"a\":"), more(nil, "1}"), start(nil, nil, "f"),
      more(nil, "{\"a\":2}"),
    ])
    #expect(calls.count == 2)
    #expect(calls.map(\.id) == ["call_1", "call_2"])
    #expect(calls.map(\.arguments) == [["a": 1], ["a": 2]])
  }

  @Test func idRepeatedInEveryDeltaAndNameRepeated() {
    let calls = assemble([
      start(0, "c1", "f", "{\"a\""), start(0, "c1", "f", ":1}"), start(1, "c2", "g", "{}"),
    ])
    #expect(calls.map(\.arguments) == [["a": 1], [:]])
  }

  @Test func argumentsAsObjectAndEmpty() {
    let calls = assemble([
      ["index": 0, "id": "a", "function": ["name": "f", "arguments": ["x": 1]]],
      ["index": 1, "id": "b", "function": ["name": "g"]],
    ])
    #expect(calls[0].arguments == ["x": 1])
    #expect(calls[1].arguments == [:])
  }

  @Test func invalidJSONIsKeptAsText() {
    let calls = assemble([start(0, "a", "f", "{\"city\": Boston}")])
    #expect(calls[0].arguments == [:])
    #expect(calls[0].argumentsText == "{\"city\": Boston}")
    #expect(calls[0].argumentsJSON == "{\"city\": Boston}")
  }

  @Test func streamStateAssemblesAWholeTurn() throws {
    var state = ChatCompletionStreamState()
    let chunks = [
      #"{"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}"#,
      #"{"choices":[{"index":0,"delta":{"content":"Let me "},"finish_reason":null}]}"#,
      #"{"choices":[{"index":0,"delta":{"content":"check."},"finish_reason":null}]}"#,
      #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
      #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}}]}"#,
      #"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
      #"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5}}"#,
      "[DONE]",
    ]
    var texts: [String] = []
    for c in chunks {
      if case .text(let t) = try state.apply(data: c) { texts.append(t) }
    }
    #expect(texts == ["Let me ", "check."])
    #expect(state.isDone)
    let turn = state.turn
    #expect(turn.text == "Let me check.")
    #expect(turn.toolCalls == [Transcript.ToolCall(id: "c", toolName: "f", arguments: ["a": 1])])
    #expect(turn.finishReason == "tool_calls")
    #expect(turn.usage == TokenUsage(promptTokens: 10, completionTokens: 5))
  }

  @Test func streamErrorsAreReported() {
    var state = ChatCompletionStreamState()
    #expect(
      throws: ChatCompletionStreamState.ChunkError(
        message: "model overloaded", reportedByServer: true)
    ) {
      _ = try state.apply(data: #"{"error":{"message":"model overloaded"}}"#)
    }
    #expect(throws: ChatCompletionStreamState.ChunkError.self) {
      _ = try state.apply(data: "{not json")
    }
  }
}

@Suite("Chat-completions wire format")
struct WireFormatTests {
  let transcript = Transcript(entries: [
    .instructions(Transcript.Instructions(text: "Be brief.")),
    .prompt(Transcript.Prompt(text: "Weather in Boston and Lisbon?")),
    .toolCalls(
      Transcript.ToolCalls(calls: [
        call("getWeather", ["city": "Boston"], id: "c1"),
        Transcript.ToolCall(id: "c2", toolName: "getWeather", rawArguments: "{broken"),
      ])),
    .toolOutput(Transcript.ToolOutput(callID: "c1", toolName: "getWeather", text: "{\"high\":13}")),
    .toolOutput(
      Transcript.ToolOutput(callID: "c2", toolName: "getWeather", text: "error", isError: true)),
    .response(Transcript.Response(text: "Boston is cooler.")),
  ])

  @Test func messagesFromATranscript() throws {
    let messages = ChatCompletions.messages(from: transcript)
    #expect(
      messages.map { $0["role"]?.stringValue } == [
        "system", "user", "assistant", "tool", "tool", "assistant",
      ])
    let assistant = messages[2]
    #expect(assistant["content"] == "")  // never null: strict servers reject it
    let calls = try #require(assistant["tool_calls"]?.arrayValue)
    #expect(
      calls[0] == [
        "id": "c1", "type": "function",
        "function": ["name": "getWeather", "arguments": "{\"city\":\"Boston\"}"],
      ])
    #expect(calls[1]["function"]?["arguments"] == "{broken")  // sent back as the model wrote it
    #expect(messages[3] == ["role": "tool", "tool_call_id": "c1", "content": "{\"high\":13}"])
  }

  @Test func unansweredCallsGetAPlaceholderOutput() {
    let cut = Transcript(entries: [
      .prompt(Transcript.Prompt(text: "hi")),
      .toolCalls(Transcript.ToolCalls(calls: [call("f", [:], id: "a"), call("g", [:], id: "b")])),
      .toolOutput(Transcript.ToolOutput(callID: "a", toolName: "f", text: "ok")),
      .prompt(Transcript.Prompt(text: "again")),
    ])
    let messages = ChatCompletions.messages(from: cut)
    #expect(
      messages.map { $0["role"]?.stringValue } == ["user", "assistant", "tool", "tool", "user"])
    #expect(messages[3]["tool_call_id"] == "b")
  }

  @Test(arguments: [
    (ToolChoice.auto, "auto"), (ToolChoice.required, "required"), (ToolChoice.none, "none"),
  ])
  func requestBodyWithTools(choice: ToolChoice, wire: String) {
    let request = ModelRequest(
      transcript: transcript,
      tools: [
        Transcript.ToolDefinition(
          name: "add", description: "Adds.", parameters: AddTool().parameters)
      ],
      toolChoice: choice,
      options: GenerationOptions(
        temperature: 0.5, maximumResponseTokens: 100, parallelToolCalls: false, seed: 7,
        additionalParameters: ["top_k": 40]))
    let body = ChatCompletions.requestBody(for: request, model: "m", stream: true)
    #expect(body["model"] == "m")
    #expect(body["tool_choice"]?.stringValue == wire)
    #expect(body["parallel_tool_calls"] == false)
    #expect(body["tools"]?[0]?["function"]?["name"] == "add")
    #expect(body["tools"]?[0]?["type"] == "function")
    #expect(body["temperature"] == .real(0.5))
    #expect(body["max_tokens"] == 100)
    #expect(body["seed"] == 7)
    #expect(body["stream"] == true)
    #expect(body["top_k"] == 40)
  }

  @Test func requestBodyWithoutToolsHasNoToolChoice() {
    let request = ModelRequest(transcript: transcript, tools: [], toolChoice: .none)
    let body = ChatCompletions.requestBody(for: request, model: "m", stream: false)
    #expect(body["tools"] == nil)
    #expect(body["tool_choice"] == nil)
    #expect(body["parallel_tool_calls"] == nil)
    #expect(body["stream"] == nil)
  }

  @Test func wholeReplies() throws {
    let reply = try JSONValue.parse(
      #"{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"type":"function","function":{"name":"g","arguments":{"y":2}}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#
    )
    let turn = try ChatCompletions.turn(fromReply: reply)
    #expect(turn.text == "")
    #expect(turn.toolCalls.map(\.id) == ["a", "call_1"])
    #expect(turn.toolCalls.map(\.arguments) == [["x": 1], ["y": 2]])
    #expect(turn.finishReason == "tool_calls")

    let parts = try JSONValue.parse(
      #"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}"#
    )
    #expect(try ChatCompletions.turn(fromReply: parts).text == "ab")
    let legacy = try JSONValue.parse(
      #"{"choices":[{"message":{"content":"","function_call":{"name":"f","arguments":"{}"}}}]}"#)
    #expect(try ChatCompletions.turn(fromReply: legacy).toolCalls.map(\.toolName) == ["f"])
    #expect(throws: ChatCompletions.MalformedReply(reason: "\"choices\" is empty")) {
      try ChatCompletions.turn(fromReply: ["choices": []])
    }
    #expect(throws: ChatCompletions.MalformedReply.self) {
      try ChatCompletions.turn(fromReply: ["id": "x"])
    }
  }

  @Test func errorMessages() {
    #expect(
      ChatCompletions.errorMessage(
        fromBody: Array(#"{"error":{"message":"bad key","type":"x"}}"#.utf8)) == "bad key")
    #expect(
      ChatCompletions.errorMessage(fromBody: Array(#"{"detail":"Not Found"}"#.utf8)) == "Not Found")
    #expect(
      ChatCompletions.errorMessage(fromBody: Array("<html>\nBad Gateway\n</html>".utf8))
        == "<html> Bad Gateway </html>")
    #expect(ChatCompletions.errorMessage(fromBody: []) == nil)
  }
}

@Suite("Configuration")
struct ConfigurationTests {
  @Test func environmentPrecedence() {
    let env = [
      "OPENAI_API_KEY": "openai", "TOOLHOST_API_KEY": "toolhost", "OPENAI_BASE_URL": "http://o/v1",
      "TOOLHOST_BASE_URL": "http://t/v1", "TOOLHOST_MODEL": "small",
    ]
    let c = OpenAIConfiguration.fromEnvironment(env)
    #expect(c.apiKey == "toolhost")
    #expect(c.baseURL == "http://t/v1")
    #expect(c.model == "small")
    let explicit = OpenAIConfiguration.fromEnvironment(env, model: "big", baseURL: "http://x:1/v1/")
    #expect(explicit.baseURL == "http://x:1/v1/")
    #expect(explicit.chatCompletionsURL == "http://x:1/v1/chat/completions")
    #expect(explicit.model == "big")
    let fallback = OpenAIConfiguration.fromEnvironment([
      "OPENAI_API_KEY": "k", "TOOLHOST_API_KEY": "",
    ])
    #expect(fallback.apiKey == "k")
    #expect(fallback.baseURL == OpenAIConfiguration.defaultBaseURL)
  }

  @Test func validation() {
    #expect(throws: LanguageModelError.self) {
      try OpenAIConfiguration(baseURL: "localhost:8080").validate()
    }
    let noKey = #expect(throws: LanguageModelError.self) {
      try OpenAIConfiguration(apiKey: nil).validate()
    }
    #expect(noKey?.message.contains("OPENAI_API_KEY") == true)
    #expect(throws: Never.self) {
      try OpenAIConfiguration(baseURL: "http://127.0.0.1:1/v1").validate()
    }
  }
}

@Suite("Output cap")
struct OutputCapTests {
  @Test func shortTextIsUntouched() {
    #expect(OutputCap.apply("hello", limit: 5) == ("hello", 0))
    #expect(OutputCap.apply("héllo", limit: 5) == ("héllo", 0))  // 6 UTF-8 bytes, 5 characters
  }

  @Test func longTextKeepsHeadAndTail() {
    let text = String(repeating: "a", count: 600) + String(repeating: "b", count: 400)
    let (capped, cut) = OutputCap.apply(text, limit: 100)
    #expect(cut == 900)
    #expect(
      capped.hasPrefix(
        String(repeating: "a", count: 50) + "\n[… toolhost cut 900 of 1000 characters here …]\n"))
    #expect(capped.hasSuffix("\n" + String(repeating: "b", count: 50)))
    #expect(capped.count == 100 + 2 + OutputCap.marker(cut: 900, of: 1000).count)
  }

  @Test func graphemesAreNotSplit() {
    let text = String(repeating: "👩‍👩‍👧", count: 10)
    let (capped, cut) = OutputCap.apply(text, limit: 4)
    #expect(cut == 6)
    #expect(capped.hasPrefix("👩‍👩‍👧👩‍👩‍👧\n"))
    #expect(capped.hasSuffix("\n👩‍👩‍👧👩‍👩‍👧"))
  }
}
