public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@SessionPropertyEntry`: turns `var name: Type = value` in an extension of `SessionPropertyValues` into a property
/// that reads and writes the session's value under a key of its own, the initial value being the default (as
/// SwiftUI's `@Entry` does for environment values):
///
/// ```swift
/// @SessionPropertyEntry var toolCallCount: Int = 0
/// // becomes
/// var toolCallCount: Int {
///   get { self[__Key_toolCallCount.self] }
///   set { self[__Key_toolCallCount.self] = newValue }
/// }
/// private struct __Key_toolCallCount: SessionPropertyKey {
///   static var defaultValue: Int { 0 }
/// }
/// ```
///
/// An optional with no initial value defaults to `nil`; any other property needs a type and an initial value.
public struct SessionPropertyEntryMacro: AccessorMacro, PeerMacro {
  /// The getter and setter through the key.
  public static func expansion(
    of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
    in context: some MacroExpansionContext
  ) throws -> [AccessorDeclSyntax] {
    // An entry the peer expansion refuses gets no accessors either, so that its error is the one reported.
    guard let entry = Entry(declaration), entry.defaultValue != nil else { return [] }
    return [
      "get { self[\(raw: entry.keyName).self] }",
      "set { self[\(raw: entry.keyName).self] = newValue }",
    ]
  }

  /// The key: a private type with the property's default.
  public static func expansion(
    of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
    in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    guard let entry = Entry(declaration) else {
      context.diagnose(.sessionPropertyEntryMisplaced, at: node)
      return []
    }
    guard let type = entry.type else {
      context.diagnose(.sessionPropertyEntryNeedsType(entry.name), at: node)
      return []
    }
    guard let value = entry.defaultValue else {
      context.diagnose(.sessionPropertyEntryNeedsValue(entry.name), at: node)
      return []
    }
    return [
      """
      private struct \(raw: entry.keyName): SessionPropertyKey {
        static var defaultValue: \(type.trimmed) { \(raw: value) }
      }
      """
    ]
  }

  /// The parts of the property the expansion uses.
  struct Entry {
    var name: String
    var type: TypeSyntax?
    var initialValue: String?
    var keyName: String { "__Key_\(name)" }
    /// The key's default: the initial value, or `nil` for an optional without one; nil when there is none or the
    /// type is not written.
    var defaultValue: String? {
      guard let type else { return nil }
      return initialValue ?? (type.isOptional ? "nil" : nil)
    }

    /// The entry of a `var` with one name, nil for anything else.
    init?(_ declaration: some DeclSyntaxProtocol) {
      guard let variable = declaration.as(VariableDeclSyntax.self),
        variable.bindingSpecifier.tokenKind == .keyword(.var), variable.bindings.count == 1,
        let binding = variable.bindings.first, binding.accessorBlock == nil,
        let identifier = binding.pattern.as(IdentifierPatternSyntax.self)
      else { return nil }
      name = identifier.identifier.text.withoutBackticks
      type = binding.typeAnnotation?.type
      initialValue = binding.initializer?.value.trimmedDescription
    }
  }
}
