import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// A problem `@Generable` or `@Guide` reports on the declaration it is attached to. Every message about a property
/// names it, so that the error reads on its own in a build log.
struct GenerationDiagnostic: DiagnosticMessage {
  let message: String
  let diagnosticID: MessageID
  let severity: DiagnosticSeverity

  private init(_ id: String, _ message: String, severity: DiagnosticSeverity = .error) {
    self.message = message
    self.diagnosticID = MessageID(domain: "ToolhostMacros", id: id)
    self.severity = severity
  }

  /// What a property's type may be, for the end of the type messages.
  private static let describableTypes =
    "use String, Int, Double, Float, Bool, an array, an optional or another @Generable type"

  /// `@Generable` on a class, an actor, a protocol or an extension.
  static let notAStructOrEnum = GenerationDiagnostic(
    "notAStructOrEnum", "@Generable applies to a struct or an enum")

  /// An enum case with associated values.
  static func caseWithAssociatedValues(_ name: String) -> Self {
    Self(
      "caseWithAssociatedValues",
      "@Generable supports enum cases without associated values; '\(name)' has some: make it a @Generable struct "
        + "property instead")
  }

  /// A stored property whose type is left to inference.
  static func missingTypeAnnotation(_ property: String) -> Self {
    Self("missingTypeAnnotation", "property '\(property)' needs a type annotation for @Generable to describe it")
  }

  /// A stored property declared with a pattern other than a name (`var (a, b): (Int, Int)`).
  static let unnamedProperty = GenerationDiagnostic(
    "unnamedProperty", "@Generable describes stored properties declared one name at a time; declare these separately")

  /// A property of a type the schema cannot describe; `part` is the offending type inside it, when it is not the
  /// property's whole type.
  static func unsupportedType(_ property: String, type: String, part: String?) -> Self {
    if let part {
      return Self(
        "unsupportedType",
        "property '\(property)' has type '\(type)', whose '\(part)' @Generable cannot describe; \(describableTypes)")
    }
    return Self(
      "unsupportedType",
      "property '\(property)' has type '\(type)', which @Generable cannot describe; \(describableTypes)")
  }

  /// An optional inside an array or another optional.
  static func nestedOptional(_ property: String, type: String) -> Self {
    Self(
      "nestedOptional",
      "property '\(property)' has type '\(type)': @Generable describes an optional only as a property's own type, not "
        + "inside an array or another optional")
  }

  /// A guide that does not apply to the property's type.
  static func guideMismatch(
    _ guide: String, property: String, type: String, inElements: Bool, appliesTo: String
  ) -> Self {
    let target = inElements ? "the elements of property" : "property"
    return Self(
      "guideMismatch",
      "@Guide \(guide) does not fit \(target) '\(property)' of type \(type): it applies to \(appliesTo)")
  }

  /// `@Guide` on something other than a stored property of a `@Generable` type.
  static let guideMisplaced = GenerationDiagnostic(
    "guideMisplaced", "@Guide applies to a stored property of a @Generable type")

  /// `@Guide` on a `let` with an initial value, which `@Generable` leaves out.
  static func guideOnConstant(_ property: String) -> Self {
    Self(
      "guideOnConstant",
      "@Guide has no effect on '\(property)': a 'let' with an initial value is not generated",
      severity: .warning)
  }
}

extension MacroExpansionContext {
  /// Reports a diagnostic on a node.
  func diagnose(_ message: GenerationDiagnostic, at node: some SyntaxProtocol) {
    diagnose(Diagnostic(node: Syntax(node), message: message))
  }
}
