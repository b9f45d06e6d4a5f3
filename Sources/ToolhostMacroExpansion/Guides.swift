import SwiftSyntax
import SwiftSyntaxBuilder

/// The arguments of one `@Guide` attribute: the description and the guides, as written.
struct GuideAttribute {
  /// The `description:` argument.
  let description: ExprSyntax?
  /// The unlabeled arguments: guide expressions (`.range(1...7)`) or a regex literal.
  let guides: [ExprSyntax]

  /// The `@Guide` attribute's arguments; nil for another attribute.
  init?(_ attribute: AttributeSyntax) {
    guard attribute.simpleName == "Guide" else { return nil }
    let arguments = attribute.arguments?.as(LabeledExprListSyntax.self) ?? []
    description = arguments.first { $0.label?.text == "description" }?.expression
    // `compactMap`, not `filter`: filtering a syntax collection makes a new tree, which moves the diagnostics.
    guides = arguments.compactMap { $0.label == nil ? $0.expression : nil }
  }

  /// The `@Guide` attributes of a declaration, in order.
  static func all(in attributes: AttributeListSyntax) -> [GuideAttribute] {
    attributes.compactMap { element in
      if case .attribute(let attribute) = element { GuideAttribute(attribute) } else { nil }
    }
  }
}

extension AttributeSyntax {
  /// The attribute's name without its module: `Guide` for `@ToolhostGeneration.Guide`.
  var simpleName: String? {
    if let identifier = attributeName.as(IdentifierTypeSyntax.self) { return identifier.name.text }
    if let member = attributeName.as(MemberTypeSyntax.self) { return member.name.text }
    return nil
  }

  /// The `description:` argument of `@Generable(description:)`.
  var descriptionArgument: ExprSyntax? {
    arguments?.as(LabeledExprListSyntax.self)?.first { $0.label?.text == "description" }?.expression
  }

  /// What follows the schema's expression for `@Generable(name: "Recipe")`: `.renamed("Recipe")`; nothing without a
  /// name.
  var renaming: String {
    guard let name = arguments?.as(LabeledExprListSyntax.self)?.first(where: { $0.label?.text == "name" })?.expression
    else { return "" }
    return ".renamed(\(name.trimmedDescription))"
  }
}

/// A guide applied to a type it does not constrain (`.range` on a String).
struct GuideMismatch {
  /// The guide expression, or the guide inside `.element(…)`.
  let node: ExprSyntax
  /// How the message names the guide: `.range`, `regex`.
  let name: String
  /// Whether the guide applies to the property's elements (inside `.element(…)`).
  let inElements: Bool
  /// The types the guide applies to, for the message.
  let appliesTo: String
}

/// Which guides fit which types, and how the expansion writes a guide.
enum Guides {
  private static let numeric: Set<String> = ["range", "minimum", "maximum"]
  private static let array: Set<String> = ["count", "minimumCount", "maximumCount", "element"]
  private static let string: Set<String> = ["anyOf", "constant", "pattern"]

  /// The ways `guide` does not fit a value of `type` (one optional allowed); none for guides this macro does not know.
  static func mismatches(of guide: ExprSyntax, on type: TypeSyntax, inElements: Bool = false) -> [GuideMismatch] {
    var shape = TypeShape(type)
    if let wrapped = shape.wrapped { shape = TypeShape(wrapped) }
    let name: String
    let arguments: LabeledExprListSyntax
    if guide.is(RegexLiteralExprSyntax.self) {
      name = "pattern"
      arguments = []
    } else if let call = guide.guideCall {
      (name, arguments) = call
    } else {
      return []
    }
    let label = guide.is(RegexLiteralExprSyntax.self) ? "regex" : ".\(name)"
    func mismatch(_ appliesTo: String) -> [GuideMismatch] {
      [GuideMismatch(node: guide, name: label, inElements: inElements, appliesTo: appliesTo)]
    }
    if numeric.contains(name) {
      switch shape {
      case .scalar(.int), .scalar(.double), .scalar(.float), .scalar(.decimal): return []
      default: return mismatch("Int, Double, Float and Decimal")
      }
    }
    if array.contains(name) {
      guard case .array(let element) = shape else { return mismatch("arrays") }
      guard name == "element" else { return [] }
      return arguments.compactMap { $0.label == nil ? $0.expression : nil }.flatMap {
        mismatches(of: $0, on: element, inElements: true)
      }
    }
    if string.contains(name) {
      if case .scalar(.string) = shape { return [] }
      return mismatch("String")
    }
    return []
  }

  /// The guide as the expansion writes it: a regex literal, bare or in `.pattern(…)`, becomes
  /// `.pattern(source: "…")` with the regex's text; everything else is copied as written.
  static func expanded(_ guide: ExprSyntax) -> ExprSyntax {
    if let regex = guide.as(RegexLiteralExprSyntax.self) {
      return ".pattern(source: \(regex.sourceLiteral))"
    }
    return RegexPatternRewriter(viewMode: .sourceAccurate).rewrite(guide.trimmed).cast(ExprSyntax.self)
  }
}

/// Rewrites `.pattern(/…/)` as `.pattern(source: "…")`, wherever it is in a guide (`.element(.pattern(/…/))`).
private final class RegexPatternRewriter: SyntaxRewriter {
  override func visit(_ node: FunctionCallExprSyntax) -> ExprSyntax {
    let visited = super.visit(node)
    guard let call = visited.as(FunctionCallExprSyntax.self), call.guideName == "pattern", call.arguments.count == 1,
      let only = call.arguments.first, only.label == nil,
      let regex = only.expression.as(RegexLiteralExprSyntax.self)
    else { return visited }
    let argument = LabeledExprSyntax(
      label: .identifier("source"), colon: .colonToken(trailingTrivia: .space), expression: regex.sourceLiteral)
    return ExprSyntax(call.with(\.arguments, [argument]))
  }
}

extension FunctionCallExprSyntax {
  /// The member a guide call names: `range` for `.range(1...7)` or `GenerationGuide.range(1...7)`.
  fileprivate var guideName: String? {
    calledExpression.as(MemberAccessExprSyntax.self)?.declName.baseName.text
  }
}

extension ExprSyntax {
  /// The guide's name and arguments: `.range(1...7)` is `range` with `1...7`; `.someGuide` has no arguments.
  fileprivate var guideCall: (name: String, arguments: LabeledExprListSyntax)? {
    if let call = self.as(FunctionCallExprSyntax.self), let name = call.guideName {
      return (name, call.arguments)
    }
    if let member = self.as(MemberAccessExprSyntax.self) {
      return (member.declName.baseName.text, [])
    }
    return nil
  }
}

extension RegexLiteralExprSyntax {
  /// The regex's text as a Swift string literal: `/\d+"/` is `"\\d+\""`.
  var sourceLiteral: ExprSyntax {
    ExprSyntax(stringLiteral: swiftStringLiteral(regex.text))
  }
}

/// Text as a Swift string literal, with backslashes, quotes and control characters escaped.
func swiftStringLiteral(_ text: String) -> String {
  var literal = "\""
  for scalar in text.unicodeScalars {
    switch scalar {
    case "\\": literal += "\\\\"
    case "\"": literal += "\\\""
    case "\n": literal += "\\n"
    case "\r": literal += "\\r"
    case "\t": literal += "\\t"
    case _ where scalar.value < 0x20 || scalar.value == 0x7F:
      literal += "\\u{\(String(scalar.value, radix: 16))}"
    default: literal.unicodeScalars.append(scalar)
    }
  }
  return literal + "\""
}
