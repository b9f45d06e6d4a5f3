public import SwiftSyntax
public import SwiftSyntaxMacros

/// `@Guide`: adds nothing itself (`@Generable` reads the description and guides from the attribute); it checks that
/// it is on a stored property of a `@Generable` struct, and that each guide fits the property's type: `.range`,
/// `.minimum` and `.maximum` numbers, `.count`, `.minimumCount`, `.maximumCount` and `.element` arrays, `.anyOf`,
/// `.constant`, `.pattern` and regex literals strings. Guides it does not know are left to the compiler.
public struct GuideMacro: PeerMacro {
  /// No peers; diagnostics on misplaced `@Guide`s and guides that do not fit.
  public static func expansion(
    of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
    in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    guard let variable = declaration.as(VariableDeclSyntax.self), variable.bindings.count == 1,
      let binding = variable.bindings.first, !variable.isTypeOrLazyProperty, binding.isStored,
      isInGenerableStruct(context)
    else {
      context.diagnose(.guideMisplaced, at: node)
      return []
    }
    // A pattern other than a name, a missing annotation or a type without a schema: GenerableMacro's errors.
    guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { return [] }
    let name = identifier.identifier.text.withoutBackticks
    if variable.isConstant(binding) {
      context.diagnose(.guideOnConstant(name), at: node)
      return []
    }
    guard let type = binding.typeAnnotation?.type, type.generationProblem() == nil, let guide = GuideAttribute(node)
    else { return [] }
    for mismatch in guide.guides.flatMap({ Guides.mismatches(of: $0, on: type) }) {
      context.diagnose(
        .guideMismatch(
          mismatch.name, property: name, type: type.trimmedDescription, inElements: mismatch.inElements,
          appliesTo: mismatch.appliesTo),
        at: mismatch.node)
    }
    return []
  }

  /// Whether the innermost declaration around the attribute is a `@Generable` struct. Without a lexical context
  /// (a compiler that sends none), it cannot tell, and assumes so.
  private static func isInGenerableStruct(_ context: some MacroExpansionContext) -> Bool {
    guard let innermost = context.lexicalContext.first else { return true }
    guard let structDecl = innermost.as(StructDeclSyntax.self) else { return false }
    return structDecl.attributes.contains { element in
      if case .attribute(let attribute) = element { attribute.simpleName == "Generable" } else { false }
    }
  }
}
