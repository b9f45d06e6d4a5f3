public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@Generable`: derives `Generable` for a struct (from its stored properties) or an enum (from its cases and their
/// associated values): the `generationSchema`, `init(_: GeneratedContent)` and `generatedContent`, in an extension
/// that declares the conformance; and, as members of a struct, a `PartiallyGenerated` type for streaming.
///
/// The extension role reports what cannot be described (and then adds nothing); the member role reports nothing, so
/// that each problem is reported once.
public struct GenerableMacro: ExtensionMacro, MemberMacro {
  /// The extension that conforms the type to `Generable`.
  public static func expansion(
    of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
    providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [ExtensionDeclSyntax] {
    let members: String
    if let structDecl = declaration.as(StructDeclSyntax.self) {
      let reading = StructProperties(structDecl.memberBlock.members, of: structDecl.name.text)
      guard report(reading.problems, in: context) else { return [] }
      members = structMembers(
        reading.generated, identities: reading.identities, description: node.descriptionArgument,
        renaming: node.renaming, access: declaration.generatedAccess)
    } else if let enumDecl = declaration.as(EnumDeclSyntax.self) {
      let reading = EnumCases(enumDecl.memberBlock.members, of: enumDecl.name.text)
      guard report(reading.problems, in: context) else { return [] }
      members = reading.members(
        description: node.descriptionArgument, renaming: node.renaming, access: declaration.generatedAccess)
    } else {
      context.diagnose(.notAStructOrEnum, at: declaration.introducer)
      return []
    }
    let conformances = protocols.isEmpty ? "" : ": " + protocols.map(\.trimmedDescription).joined(separator: ", ")
    let decl = DeclSyntax("extension \(raw: type.trimmedDescription)\(raw: conformances) {\n\(raw: members)}")
    return decl.as(ExtensionDeclSyntax.self).map { [$0] } ?? []
  }

  /// The `PartiallyGenerated` struct of a struct: every property optional and partial. Nothing for an enum (its
  /// partial type is itself) or a declaration with problems.
  public static func expansion(
    of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
    conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    guard let structDecl = declaration.as(StructDeclSyntax.self) else { return [] }
    let reading = StructProperties(structDecl.memberBlock.members, of: structDecl.name.text)
    guard reading.problems.isEmpty else { return [] }
    let access = declaration.generatedAccess
    let properties = reading.generated
    let identities = reading.identities
    let stored =
      identities.map { "\(access)var \($0.name.text): \($0.type.trimmedDescription)\n" }.joined()
      + properties.map { "\(access)var \($0.name.text): \($0.partialType)\n" }.joined()
    // A property still being generated (a half-written enum case, a number cut short) is nil until it converts.
    let assignments =
      identities.map { "self.\($0.name.text) = \($0.identityValue)\n" }.joined()
      + properties.map {
        "self.\($0.name.text) = try? content.value(\($0.partialType).self, forProperty: \(swiftStringLiteral($0.key)))\n"
      }.joined()
    return [
      """
      \(raw: access)nonisolated struct PartiallyGenerated: ConvertibleFromGeneratedContent {
      \(raw: stored)\(raw: access)nonisolated init(_ content: GeneratedContent) throws {
      _ = try content.properties()
      \(raw: assignments)}
      }
      """
    ]
  }

  /// Reports the problems; true when there are none.
  private static func report(_ problems: [DeclarationProblem], in context: some MacroExpansionContext) -> Bool {
    for problem in problems { context.diagnose(problem.message, at: problem.node) }
    return problems.isEmpty
  }

  /// The members of a struct's `Generable` extension.
  private static func structMembers(
    _ properties: [GenerableProperty], identities identityProperties: [GenerableProperty], description: ExprSyntax?,
    renaming: String, access: String
  ) -> String {
    // A `GenerationID` is not generated: it is the content's, or a new one.
    let identities = identityProperties.map { "self.\($0.name.text) = \($0.identityValue)\n" }
    let schemaProperties = properties.map { property in
      var arguments = ["name: \(swiftStringLiteral(property.key))"]
      if let description = property.description { arguments.append("description: \(description.trimmedDescription)") }
      arguments.append("type: \(property.valueType).self")
      if !property.guides.isEmpty {
        let guides = property.guides.map { Guides.expanded($0).trimmedDescription }
        arguments.append("guides: [\(guides.joined(separator: ", "))]")
      }
      return "GenerationSchema.Property(\(arguments.joined(separator: ", "))),\n"
    }
    let assignments = properties.map {
      "self.\($0.name.text) = try content.value(\($0.valueType).self, forProperty: \(swiftStringLiteral($0.key)))\n"
    }
    // A nil optional is left out (not written as null), so the content validates against the schema, where the
    // property is simply not required.
    let required = properties.filter { !$0.isOptional }.map { "(\(swiftStringLiteral($0.key)), self.\($0.name.text))" }
    let optionals = properties.filter(\.isOptional).map {
      "if let value = self.\($0.name.text) { properties.append((\(swiftStringLiteral($0.key)), value)) }\n"
    }
    let pairs = properties.map { "\(swiftStringLiteral($0.key)): \($0.name.text)" }
    // The value's identity goes with its content.
    let idArgument = identityProperties.first.map { ", id: self.\($0.name.text)" } ?? ""
    let contentBody =
      optionals.isEmpty
      ? "GeneratedContent(properties: [\(pairs.isEmpty ? ":" : pairs.joined(separator: ", "))]\(idArgument))"
      : """
      var properties: [(String, any ConvertibleToGeneratedContent)] = [\(required.joined(separator: ", "))]
      \(optionals.joined())return GeneratedContent(properties: properties\(idArgument), uniquingKeysWith: { first, _ in first })
      """
    let descriptionArgument = description.map { "description: \($0.trimmedDescription),\n" } ?? ""
    return """
      \(access)nonisolated static var generationSchema: GenerationSchema {
      GenerationSchema(
      type: Self.self,
      \(descriptionArgument)properties: [\(schemaProperties.isEmpty ? "" : "\n")\(schemaProperties.joined())]
      )\(renaming)
      }
      \(access)nonisolated init(_ content: GeneratedContent) throws {
      \(identities.joined())\(assignments.joined())}
      \(access)nonisolated var generatedContent: GeneratedContent {
      \(contentBody)
      }

      """
  }
}

extension DeclGroupSyntax {
  /// The access modifier (with a space) of what the macro adds: `public ` for a public type, `package ` for a package
  /// one, else none.
  var generatedAccess: String {
    for modifier in modifiers {
      switch modifier.name.tokenKind {
      case .keyword(.public), .keyword(.open): return "public "
      case .keyword(.package): return "package "
      default: continue
      }
    }
    return ""
  }
}
