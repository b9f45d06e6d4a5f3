import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros
import ToolhostMacroExpansion

/// The compiler plugin that provides `@Generable` and `@Guide` (declared in ToolhostGeneration) and
/// `@SessionPropertyEntry` (declared in ToolhostSession). The expansions are
/// in ToolhostMacroExpansion, a library the macro tests use without depending on this plugin; the compiler names
/// the macros by this module (`ToolhostMacros.GenerableMacro`), so the types here hand each expansion to it.
@main
struct ToolhostMacrosPlugin: CompilerPlugin {
  let providingMacros: [any Macro.Type] = [GenerableMacro.self, GuideMacro.self, SessionPropertyEntryMacro.self]
}

/// `@Generable`: ToolhostMacroExpansion's expansion.
struct GenerableMacro: ExtensionMacro, MemberMacro {
  static func expansion(
    of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
    providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [ExtensionDeclSyntax] {
    try ToolhostMacroExpansion.GenerableMacro.expansion(
      of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
  }

  static func expansion(
    of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
    conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    try ToolhostMacroExpansion.GenerableMacro.expansion(
      of: node, providingMembersOf: declaration, conformingTo: protocols, in: context)
  }
}

/// `@Guide`: ToolhostMacroExpansion's checks.
struct GuideMacro: PeerMacro {
  static func expansion(
    of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
    in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    try ToolhostMacroExpansion.GuideMacro.expansion(of: node, providingPeersOf: declaration, in: context)
  }
}

/// `@SessionPropertyEntry`: ToolhostMacroExpansion's expansion.
struct SessionPropertyEntryMacro: AccessorMacro, PeerMacro {
  static func expansion(
    of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
    in context: some MacroExpansionContext
  ) throws -> [AccessorDeclSyntax] {
    try ToolhostMacroExpansion.SessionPropertyEntryMacro.expansion(
      of: node, providingAccessorsOf: declaration, in: context)
  }

  static func expansion(
    of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
    in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    try ToolhostMacroExpansion.SessionPropertyEntryMacro.expansion(of: node, providingPeersOf: declaration, in: context)
  }
}
