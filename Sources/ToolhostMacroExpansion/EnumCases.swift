import SwiftSyntax

/// The cases of a `@Generable` enum, which its values are generated as: one string each.
struct EnumCases {
  /// The case names as written (with backticks, if any), in order.
  private(set) var names: [TokenSyntax] = []
  /// Cases with associated values, which a string cannot carry.
  private(set) var problems: [DeclarationProblem] = []

  /// Reads the enum's cases; raw values are ignored.
  init(_ members: MemberBlockItemListSyntax) {
    for member in members {
      guard let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
      for element in caseDecl.elements {
        if element.parameterClause != nil {
          problems.append(
            DeclarationProblem(
              node: Syntax(element), message: .caseWithAssociatedValues(element.name.text.withoutBackticks)))
        } else {
          names.append(element.name.trimmed)
        }
      }
    }
  }

  /// The members of the enum's `Generable` extension: a string schema of the case names, and conversions that
  /// switch over them.
  func members(description: ExprSyntax?, access: String) -> String {
    let keys = names.map { swiftStringLiteral($0.text.withoutBackticks) }
    let descriptionArgument = description.map { "description: \($0.trimmedDescription), " } ?? ""
    let decoding = zip(names, keys).map { name, key in "case \(key): self = .\(name.text)\n" }.joined()
    let expected = names.map { "\\\"\($0.text.withoutBackticks)\\\"" }.joined(separator: ", ")
    let encoding = zip(names, keys).map { name, key in
      "case .\(name.text): GeneratedContent(kind: .string(\(key)))\n"
    }.joined()
    return """
      \(access)nonisolated static var generationSchema: GenerationSchema {
      GenerationSchema(type: Self.self, \(descriptionArgument)anyOf: [\(keys.joined(separator: ", "))])
      }
      \(access)nonisolated init(_ content: GeneratedContent) throws {
      switch try String(content) {
      \(decoding)case let other:
      throw GeneratedContentError(path: "", message: "expected one of \(expected), found \\"\\(other)\\"")
      }
      }
      \(access)nonisolated var generatedContent: GeneratedContent {
      switch self {
      \(encoding)}
      }

      """
  }
}
