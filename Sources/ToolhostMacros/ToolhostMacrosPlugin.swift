import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides `@Generable` and `@Guide` (declared in ToolhostGeneration).
@main
struct ToolhostMacrosPlugin: CompilerPlugin {
  let providingMacros: [any Macro.Type] = [GenerableMacro.self, GuideMacro.self]
}
