import SwiftSyntax

/// One associated value of an enum case.
struct AssociatedValue {
  /// The label in the case's declaration (`nil` for an unlabelled value), for constructing the case.
  let label: String?
  /// The key in the schema and in generated content: the label, the parameter's name, or `_0`, `_1`, … by position.
  let key: String
  /// The declared type, without redundant parentheses.
  let type: TypeSyntax

  /// The type the schema and `GeneratedContent.value(_:forProperty:)` are given.
  var valueType: String { type.generatedValueType }

  /// Whether the value is optional (in any of its spellings).
  var isOptional: Bool { type.isOptional }
}

/// A case of a `@Generable` enum.
struct EnumCase {
  /// The name as written (with backticks, if any).
  let name: TokenSyntax
  /// The associated values, or `nil` for a case without.
  let values: [AssociatedValue]?

  /// The name in the schema and in generated content.
  var key: String { name.text.withoutBackticks }

  /// Whether the case's one value is generated as it is (`{"case": value}`) rather than as an object of properties:
  /// one unlabelled, non-optional value.
  var hasSingleValue: Bool {
    guard let values, values.count == 1 else { return false }
    return values[0].label == nil && !values[0].isOptional && values[0].key == "_0"
  }
}

/// The cases of a `@Generable` enum: a case without associated values is generated as its name, a case with them as
/// an object of one property, the case's name, holding the values.
struct EnumCases {
  /// The cases, in order.
  private(set) var cases: [EnumCase] = []
  /// Associated values whose types `@Generable` cannot describe.
  private(set) var problems: [DeclarationProblem] = []

  /// Reads the cases of the enum called `typeName`; raw values and default values are ignored.
  init(_ members: MemberBlockItemListSyntax, of typeName: String) {
    var seen: Set<String> = []
    for member in members {
      guard let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
      for element in caseDecl.elements {
        guard seen.insert(element.name.text.withoutBackticks).inserted else {
          problems.append(
            DeclarationProblem(node: Syntax(element), message: .duplicateCase(element.name.text.withoutBackticks)))
          continue
        }
        guard let parameters = element.parameterClause?.parameters else {
          cases.append(EnumCase(name: element.name.trimmed, values: nil))
          continue
        }
        var values: [AssociatedValue] = []
        for (index, parameter) in parameters.enumerated() {
          let first = parameter.firstName.map { $0.text.withoutBackticks }
          let second = parameter.secondName.map { $0.text.withoutBackticks }
          let label = first == "_" ? nil : first
          let key = label ?? (second == "_" ? nil : second) ?? "_\(index)"
          let subject = "associated value '\(key)' of case '\(element.name.text.withoutBackticks)'"
          if let problem = parameter.type.generationProblem(inside: typeName) {
            problems.append(StructProperties.diagnose(problem, subject: subject, type: parameter.type))
            continue
          }
          values.append(AssociatedValue(label: label, key: key, type: parameter.type.withoutParentheses))
        }
        cases.append(EnumCase(name: element.name.trimmed, values: values))
      }
    }
  }

  /// The members of the enum's `Generable` extension: the schema of the cases, and conversions that switch over them.
  func members(description: ExprSyntax?, renaming: String, access: String) -> String {
    let descriptionArgument = description.map { "description: \($0.trimmedDescription), " } ?? ""
    guard cases.contains(where: { $0.values != nil }) else {
      return namesOnly(descriptionArgument: descriptionArgument, renaming: renaming, access: access)
    }
    let schemaCases = cases.map { c -> String in
      let name = swiftStringLiteral(c.key)
      guard let values = c.values else { return "GenerationSchema.Case(name: \(name))" }
      if c.hasSingleValue { return "GenerationSchema.Case(name: \(name), value: \(values[0].valueType).self)" }
      let properties = values.map {
        "GenerationSchema.Property(name: \(swiftStringLiteral($0.key)), type: \($0.valueType).self)"
      }
      return "GenerationSchema.Case(name: \(name), properties: [\(properties.joined(separator: ", "))])"
    }
    let decoding = cases.map { c -> String in
      let name = swiftStringLiteral(c.key)
      guard let values = c.values else { return "case (\(name), nil): self = .\(c.name.text)\n" }
      let arguments = values.map { value -> String in
        let read =
          c.hasSingleValue
          ? "try values.value(\(value.valueType).self)"
          : "try values.value(\(value.valueType).self, forProperty: \(swiftStringLiteral(value.key)))"
        return value.label.map { "\($0): \(read)" } ?? read
      }
      return """
        case (\(name), let values?):
        do { self = .\(c.name.text)(\(arguments.joined(separator: ", "))) } catch let error as GeneratedContentError {
        throw error.inside(\(swiftStringLiteral("/" + c.key)))
        }

        """
    }.joined()
    let expected = cases.map { c in
      c.values == nil ? "\\\"\(c.key)\\\"" : "{\\\"\(c.key)\\\": …}"
    }.joined(separator: ", ")
    let encoding = cases.map { c -> String in
      let name = swiftStringLiteral(c.key)
      guard let values = c.values else {
        return "case .\(c.name.text): GeneratedContent(enumCase: \(name), values: nil)\n"
      }
      let bindings = values.indices.map { "let v\($0)" }.joined(separator: ", ")
      let pairs = values.enumerated().map { i, value in
        "(\(swiftStringLiteral(c.hasSingleValue ? "" : value.key)), v\(i))"
      }.joined(separator: ", ")
      return "case .\(c.name.text)(\(bindings)): GeneratedContent(enumCase: \(name), values: [\(pairs)])\n"
    }.joined()
    return """
      \(access)nonisolated static var generationSchema: GenerationSchema {
      GenerationSchema(type: Self.self, \(descriptionArgument)cases: [\(schemaCases.joined(separator: ", "))])\(renaming)
      }
      \(access)nonisolated init(_ content: GeneratedContent) throws {
      switch try content.enumCase() {
      \(decoding)default:
      throw GeneratedContentError(path: "", message: "expected one of \(expected), found \\(content.jsonString)")
      }
      }
      \(access)nonisolated var generatedContent: GeneratedContent {
      switch self {
      \(encoding)}
      }

      """
  }

  /// The members of an enum whose cases have no associated values: a string schema of the case names.
  private func namesOnly(descriptionArgument: String, renaming: String, access: String) -> String {
    let names = cases.map(\.name)
    let keys = names.map { swiftStringLiteral($0.text.withoutBackticks) }
    let decoding = zip(names, keys).map { name, key in "case \(key): self = .\(name.text)\n" }.joined()
    let expected = names.map { "\\\"\($0.text.withoutBackticks)\\\"" }.joined(separator: ", ")
    let encoding = zip(names, keys).map { name, key in
      "case .\(name.text): GeneratedContent(kind: .string(\(key)))\n"
    }.joined()
    return """
      \(access)nonisolated static var generationSchema: GenerationSchema {
      GenerationSchema(type: Self.self, \(descriptionArgument)anyOf: [\(keys.joined(separator: ", "))])\(renaming)
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
