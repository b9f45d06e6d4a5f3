// The questions of the `answers` eval (issue 30) and how they are read from their JSON file.
public import Foundation
public import ToolhostJSON

/// What kind of question one is, for the per-category scores.
public enum QuestionCategory: String, Sendable, CaseIterable {
  /// Needs several calls (several cities or amounts, or two different tools).
  case several
  /// No offered tool serves it, though it sounds close to one (prices, flights, e-mail, trivia…).
  case none
  /// Not in English.
  case language
  /// Terse or misspelled.
  case terse
  /// One call, asked plainly.
  case single
}

/// One call a question needs: the tool, what its arguments must be, and which others the user gave or implied.
public struct ExpectedCall: Sendable, Equatable {
  /// The tool's name.
  public var tool: String
  /// Argument name → what its value must be, by the rules of ``matches(_:_:)``; an expected `false` is also met by
  /// leaving the argument out.
  public var arguments: JSONObject
  /// Argument names that may be present beyond the expected ones (dotted for a key of a nested object:
  /// `datasets.name`).
  public var allowedArguments: Set<String>
  /// Whether the call asks for the user's approval by design (a destructive tool), so that `ask` with no terminal
  /// refuses it: then the call made with the expected arguments and an answer saying it was not done are right.
  public var needsApproval: Bool

  /// Makes an expected call.
  public init(
    tool: String, arguments: JSONObject = [:], allowedArguments: Set<String> = [], needsApproval: Bool = false
  ) {
    self.tool = tool
    self.arguments = arguments
    self.allowedArguments = allowedArguments
    self.needsApproval = needsApproval
  }

  /// Whether a call of `tool` with `arguments` is this call: the same tool, every expected argument matching.
  public func isMet(tool: String, arguments: JSONValue) -> Bool {
    tool == self.tool && argumentsMatch(arguments, self.arguments)
  }

  /// One line for people: `getWeather {"city":"Oslo","month":1}`.
  public var summary: String { "\(tool) \(JSONValue.object(arguments).description)" }
}

/// One question of the eval.
public struct EvalQuestion: Sendable, Equatable {
  /// What the user types.
  public var prompt: String
  /// Its kind.
  public var category: QuestionCategory
  /// The calls it needs (none for a question no tool serves).
  public var calls: [ExpectedCall]
  /// Whether the calls depend on one another (a list before marking an item done), so that they may take several
  /// rounds; independent calls are expected in one.
  public var sequential: Bool

  /// Makes a question.
  public init(prompt: String, category: QuestionCategory, calls: [ExpectedCall], sequential: Bool = false) {
    self.prompt = prompt
    self.category = category
    self.calls = calls
    self.sequential = sequential
  }

  /// The questions of a file `{"questions": [{"prompt", "category", "calls": [{"tool", "arguments",
  /// "allowedArguments", "needsApproval"}], "sequential"}]}`; throws ``EvalFileError`` naming the file and the question when it is
  /// missing or malformed.
  public static func load(from file: URL) throws -> [EvalQuestion] {
    guard let data = FileManager.default.contents(atPath: file.path) else {
      throw EvalFileError("cannot read the questions file \(file.path) (run from the checkout's root)")
    }
    let json: JSONValue
    do { json = try JSONValue.parse(String(decoding: data, as: UTF8.self)) } catch {
      throw EvalFileError("\(file.path) is not JSON: \(error)")
    }
    do { return try parse(json) } catch { throw EvalFileError("\(file.path): \(error.description)") }
  }

  /// The questions of a parsed questions file (see ``load(from:)``).
  public static func parse(_ json: JSONValue) throws(EvalFileError) -> [EvalQuestion] {
    guard let list = json["questions"]?.arrayValue else { throw EvalFileError("no \"questions\" array") }
    var questions: [EvalQuestion] = []
    for (n, entry) in list.enumerated() {
      func fail(_ why: String) -> EvalFileError { EvalFileError("question \(n): \(why)") }
      guard let prompt = entry["prompt"]?.stringValue, !prompt.isEmpty else { throw fail("no prompt") }
      guard let name = entry["category"]?.stringValue, let category = QuestionCategory(rawValue: name) else {
        throw fail("category is not one of \(QuestionCategory.allCases.map(\.rawValue).joined(separator: ", "))")
      }
      guard let callList = entry["calls"]?.arrayValue else { throw fail("no \"calls\" array") }
      var calls: [ExpectedCall] = []
      for call in callList {
        guard let tool = call["tool"]?.stringValue else { throw fail("a call without \"tool\"") }
        let arguments = call["arguments"] ?? [:]
        guard let object = arguments.objectValue else { throw fail("\(tool)'s arguments are not an object") }
        let allowed = call["allowedArguments"]?.arrayValue ?? []
        guard allowed.allSatisfy({ $0.stringValue != nil }) else { throw fail("allowedArguments are not names") }
        calls.append(
          ExpectedCall(
            tool: tool, arguments: object, allowedArguments: Set(allowed.compactMap(\.stringValue)),
            needsApproval: call["needsApproval"]?.boolValue ?? false))
      }
      guard (category == .none) == calls.isEmpty else {
        throw fail(category == .none ? "a none question with calls" : "no calls for a \(name) question")
      }
      questions.append(
        EvalQuestion(
          prompt: prompt, category: category, calls: calls, sequential: entry["sequential"]?.boolValue ?? false))
    }
    return questions
  }
}

/// A questions file that cannot be used, and why.
public struct EvalFileError: Error, CustomStringConvertible, Equatable {
  /// What is wrong, with the file and question.
  public var description: String
  /// Makes an error.
  public init(_ description: String) { self.description = description }
}
