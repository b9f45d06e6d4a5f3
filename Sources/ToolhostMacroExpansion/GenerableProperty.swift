import SwiftSyntax

/// A stored property `@Generable` describes, read from the struct's declaration.
struct GenerableProperty {
  /// The name as written (with backticks, if any), for code.
  let name: TokenSyntax
  /// The declared type, without redundant parentheses.
  let type: TypeSyntax
  /// The `@Guide(description:)` argument, as written.
  let description: ExprSyntax?
  /// The guides that fit the type, as written.
  let guides: [ExprSyntax]

  /// Whether the property is optional (in any of its spellings).
  var isOptional: Bool { type.isOptional }

  /// Whether the property is a `GenerationID`: an identity the framework gives each generated value, not something
  /// the model writes, so it is left out of the schema and the content.
  var isGenerationID: Bool {
    let base = TypeShape(type).wrapped?.withoutParentheses ?? type
    return ["GenerationID", "ToolhostGeneration.GenerationID"].contains(base.trimmedDescription)
  }

  /// What a `GenerationID` property is set to from content: the content's identifier (a new one when it has none
  /// and the property is not optional).
  var identityValue: String { isOptional ? "content.id" : "content.id ?? GenerationID()" }

  /// The name in the schema and in generated content: without backticks.
  var key: String { name.text.withoutBackticks }

  /// The type the schema and `GeneratedContent.value(_:forProperty:)` are given.
  var valueType: String { type.generatedValueType }

  /// The property's type in `PartiallyGenerated`: the (unwrapped) type's partial type, optional.
  var partialType: String {
    let base = TypeShape(type).wrapped?.withoutParentheses ?? type
    return "\(base.trimmedDescription).PartiallyGenerated?"
  }
}

/// A problem found in a declaration, and the node to report it on.
struct DeclarationProblem {
  /// Where.
  let node: Syntax
  /// What.
  let message: GenerationDiagnostic
}

/// The stored properties of a struct, in order, and what prevents describing them.
struct StructProperties {
  /// The stored properties `@Generable` reads, in order.
  private(set) var properties: [GenerableProperty] = []
  /// The properties the model generates: all but the `GenerationID`s.
  var generated: [GenerableProperty] { properties.filter { !$0.isGenerationID } }
  /// The `GenerationID` properties: each generated value's identity, not generated.
  var identities: [GenerableProperty] { properties.filter(\.isGenerationID) }
  /// What `@Generable` cannot describe.
  private(set) var problems: [DeclarationProblem] = []

  /// Reads the members of the struct called `typeName`: stored instance properties, not `let`s with an initial value.
  init(_ members: MemberBlockItemListSyntax, of typeName: String) {
    for member in members {
      if let variable = member.decl.as(VariableDeclSyntax.self) { read(variable, of: typeName) }
    }
  }

  private mutating func read(_ variable: VariableDeclSyntax, of typeName: String) {
    guard !variable.isTypeOrLazyProperty else { return }
    // `@Guide` on a declaration of several bindings is GuideMacro's error; the bindings get no guides.
    let guides = variable.bindings.count == 1 ? GuideAttribute.all(in: variable.attributes) : []
    for (index, binding) in variable.bindings.enumerated() {
      guard binding.isStored, !variable.isConstant(binding) else { continue }
      guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
        problems.append(DeclarationProblem(node: Syntax(binding.pattern), message: .unnamedProperty))
        continue
      }
      let name = identifier.identifier.text.withoutBackticks
      guard let type = variable.declaredType(ofBinding: index) else {
        problems.append(DeclarationProblem(node: Syntax(identifier), message: .missingTypeAnnotation(name)))
        continue
      }
      if let problem = type.generationProblem(inside: typeName) {
        problems.append(Self.diagnose(problem, subject: "property '\(name)'", type: type))
        continue
      }
      properties.append(
        GenerableProperty(
          name: identifier.identifier.trimmed, type: type.withoutParentheses,
          description: guides.lazy.compactMap(\.description).first,
          guides: guides.flatMap(\.guides).filter { Guides.mismatches(of: $0, on: type).isEmpty }))
    }
  }

  /// The diagnostic of a type problem of `subject` (`property 'city'`), on the part of the type at fault.
  static func diagnose(_ problem: TypeProblem, subject: String, type: TypeSyntax) -> DeclarationProblem {
    switch problem {
    case .unsupported(let part):
      let whole = part.trimmedDescription == type.withoutParentheses.trimmedDescription
      return DeclarationProblem(
        node: Syntax(part),
        message: .unsupportedType(
          subject, type: type.trimmedDescription, part: whole ? nil : part.trimmedDescription))
    case .nestedOptional(let part):
      return DeclarationProblem(node: Syntax(part), message: .nestedOptional(subject, type: type.trimmedDescription))
    case .recursive(let part):
      return DeclarationProblem(node: Syntax(part), message: .recursiveType(subject, type: part.trimmedDescription))
    }
  }
}

extension VariableDeclSyntax {
  /// Whether the declaration is `static`, `class` or `lazy`: not a stored value of an instance to generate.
  var isTypeOrLazyProperty: Bool {
    modifiers.contains { [.keyword(.static), .keyword(.class), .keyword(.lazy)].contains($0.name.tokenKind) }
  }

  /// Whether the binding is a `let` with an initial value, which every instance shares.
  func isConstant(_ binding: PatternBindingSyntax) -> Bool {
    bindingSpecifier.tokenKind == .keyword(.let) && binding.initializer != nil
  }

  /// The type of a binding: its annotation, or the next one's in `var a, b: Int`.
  func declaredType(ofBinding index: Int) -> TypeSyntax? {
    let bindings = Array(bindings)
    if let type = bindings[index].typeAnnotation?.type { return type }
    guard bindings[index].initializer == nil, bindings[index].accessorBlock == nil else { return nil }
    for later in bindings[(index + 1)...] {
      if let type = later.typeAnnotation?.type { return type }
      if later.initializer != nil || later.accessorBlock != nil { return nil }
    }
    return nil
  }
}

extension PatternBindingSyntax {
  /// Whether the binding stores its value: no accessors, or only `willSet` and `didSet`.
  var isStored: Bool {
    guard let accessorBlock else { return true }
    switch accessorBlock.accessors {
    case .getter: return false
    case .accessors(let accessors):
      return accessors.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }
  }
}

extension String {
  /// The identifier without the backticks that escape a keyword: `default` for `` `default` ``.
  var withoutBackticks: String {
    count >= 2 && hasPrefix("`") && hasSuffix("`") ? String(dropFirst().dropLast()) : self
  }
}
