import Testing
import ToolhostChat
import ToolhostCore
import ToolhostJSON

/// What a line typed into `toolhost chat` asks for.
@Suite("chat lines")
struct ChatLineTests {
  struct Named: Tool {
    let name: String
    let description: String
    let parameters: JSONValue = ["type": "object"]
    func call(arguments: JSONValue) async throws -> JSONValue { [:] }
  }

  let tools = try! ToolRegistry([
    Named(name: "getWeather", description: "Typical weather for a city.\nMore."),
    Named(name: "todoList", description: "The to-do list."),
  ])

  @Test func linesAndWhatTheyAskFor() throws {
    #expect(ChatLine("Weather in Oslo?", tools: tools) == .prompt("Weather in Oslo?"))
    #expect(ChatLine("@getWeather Oslo in May", tools: tools) == .pick(tool: "getWeather", message: "Oslo in May"))
    #expect(ChatLine("/tools", tools: tools) == .listTools(filter: ""))
    #expect(ChatLine("/tools to do", tools: tools) == .listTools(filter: "to do"))
    #expect(ChatLine("/clear", tools: tools) == .clear)
    #expect(ChatLine("/help", tools: tools) == .help)
    #expect(ChatLine("/quit", tools: tools) == .quit)
    #expect(ChatLine("/exit", tools: tools) == .quit)
    #expect(ChatLine("//etc/hosts is a file", tools: tools) == .prompt("/etc/hosts is a file"))
    #expect(ChatLine("@@home", tools: tools) == .prompt("@home"))
  }

  @Test func linesThatMatchNothingAreHints() {
    guard case .hint(let unknown) = ChatLine("/weather", tools: tools) else {
      Issue.record("not a hint")
      return
    }
    #expect(unknown.hasPrefix("/weather is not a command"))
    guard case .hint(let near) = ChatLine("@getwether Oslo", tools: tools) else {
      Issue.record("not a hint")
      return
    }
    #expect(near.contains("did you mean @getWeather?"), "\(near)")
    guard case .hint(let empty) = ChatLine("@todoList", tools: tools) else {
      Issue.record("not a hint")
      return
    }
    #expect(empty == "write the message after the tool's name: @todoList what to ask")
    guard case .hint = ChatLine("/clear now", tools: tools) else {
      Issue.record("/clear with words after it was taken as /clear")
      return
    }
    guard case .hint(let none) = ChatLine("@getWeather x", tools: try! ToolRegistry([])) else {
      Issue.record("not a hint")
      return
    }
    #expect(none.hasPrefix("this chat offers no tools"))
  }

  @Test func completions() {
    let names = tools.tools.map(\.name)
    #expect(ChatLine.completions(of: "@get", toolNames: names) == ["@getWeather"])
    #expect(ChatLine.completions(of: "@", toolNames: names) == ["@getWeather", "@todoList"])
    #expect(ChatLine.completions(of: "/c", toolNames: names) == ["/clear"])
    #expect(ChatLine.completions(of: "get", toolNames: names).isEmpty)
  }

  @Test func theToolList() {
    #expect(
      ToolPicker.lines(tools.tools, filter: "") == [
        "getWeather  Typical weather for a city.", "todoList    The to-do list.",
      ])
    #expect(ToolPicker.lines(tools.tools, filter: "TO-DO") == ["todoList  The to-do list."])
    #expect(ToolPicker.lines(tools.tools, filter: "nothing").isEmpty)
  }
}
