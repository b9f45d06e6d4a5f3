import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// A problem `@Generable`, `@Guide` or `@SessionPropertyEntry` reports on the declaration it is attached to. Every message about a property
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

  /// A stored property whose type is left to inference.
  static func missingTypeAnnotation(_ property: String) -> Self {
    Self("missingTypeAnnotation", "property '\(property)' needs a type annotation for @Generable to describe it")
  }

  /// A stored property declared with a pattern other than a name (`var (a, b): (Int, Int)`).
  static let unnamedProperty = GenerationDiagnostic(
    "unnamedProperty", "@Generable describes stored properties declared one name at a time; declare these separately")

  /// A property (or an enum case's associated value) of a type the schema cannot describe; `subject` names it
  /// (`property 'when'`), and `part` is the offending type inside it, when it is not its whole type.
  static func unsupportedType(_ subject: String, type: String, part: String?) -> Self {
    if let part {
      return Self(
        "unsupportedType",
        "\(subject) has type '\(type)', whose '\(part)' @Generable cannot describe; \(describableTypes)")
    }
    return Self(
      "unsupportedType",
      "\(subject) has type '\(type)', which @Generable cannot describe; \(describableTypes)")
  }

  /// An optional inside an array or another optional; `subject` names the property or associated value.
  static func nestedOptional(_ subject: String, type: String) -> Self {
    Self(
      "nestedOptional",
      "\(subject) has type '\(type)': @Generable describes an optional only as a property's own type, not "
        + "inside an array or another optional")
  }

  /// A property or associated value whose type is the type being derived, or contains it.
  static func recursiveType(_ subject: String, type: String) -> Self {
    Self(
      "recursiveType",
      "\(subject) has type '\(type)', which contains the type itself: @Generable describes a type by writing its "
        + "schema out whole, so it cannot describe a recursive one; make the nested part a type of its own")
  }

  /// Two enum cases of the same name (with different labels), which generated content cannot tell apart.
  static func duplicateCase(_ name: String) -> Self {
    Self(
      "duplicateCase",
      "@Generable generates an enum case by its name, and '\(name)' names two cases; give one a name of its own")
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

  /// `@SessionPropertyEntry` on something other than a `var` with one name and no accessors.
  static let sessionPropertyEntryMisplaced = GenerationDiagnostic(
    "sessionPropertyEntryMisplaced",
    "@SessionPropertyEntry applies to a 'var' with one name in an extension of SessionPropertyValues")

  /// `@SessionPropertyEntry` on a property whose type is left to inference.
  static func sessionPropertyEntryNeedsType(_ property: String) -> Self {
    Self(
      "sessionPropertyEntryNeedsType",
      "session property '\(property)' needs a type annotation: write 'var \(property): Type = value'")
  }

  /// `@SessionPropertyEntry` on a non-optional property with no initial value.
  static func sessionPropertyEntryNeedsValue(_ property: String) -> Self {
    Self(
      "sessionPropertyEntryNeedsValue",
      "session property '\(property)' needs an initial value, its default (only an optional defaults to nil)")
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
