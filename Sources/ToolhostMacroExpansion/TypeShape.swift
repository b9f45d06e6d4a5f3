import SwiftSyntax

/// The scalar types a `GenerationSchema` describes directly.
enum ScalarType {
  case string, int, double, float, decimal, bool
}

/// What `@Generable` makes of a property's type, read from its syntax alone (the macro sees no type information).
enum TypeShape {
  /// `String`, `Int`, `Double`, `Float`, `Decimal` or `Bool`.
  case scalar(ScalarType)
  /// `[T]` or `Array<T>`.
  case array(element: TypeSyntax)
  /// `T?`, `T!` or `Optional<T>`.
  case optional(wrapped: TypeSyntax)
  /// Any other named type: assumed to be `@Generable` (the compiler checks the conformance).
  case named
  /// A type no schema describes: dictionaries, sets, tuples, functions, existentials, fixed-width integers…
  case unsupported

  /// Named types of the standard library and Foundation that are not `Generable`.
  private static let unsupportedNames: Set<String> = [
    "Dictionary", "Set", "Date", "URL", "Data", "UUID", "Character", "Substring", "Any", "AnyObject",
    "AnyHashable", "Void", "Never", "UInt", "Int8", "Int16", "Int32", "Int64", "Int128", "UInt8", "UInt16", "UInt32",
    "UInt64", "UInt128", "Float16", "Float80", "CGFloat",
  ]

  private static let scalars: [String: ScalarType] = [
    "String": .string, "Int": .int, "Double": .double, "Float": .float, "Decimal": .decimal, "Bool": .bool,
  ]

  /// The shape of a type.
  init(_ type: TypeSyntax) {
    let type = type.withoutParentheses
    if let optional = type.as(OptionalTypeSyntax.self) {
      self = .optional(wrapped: optional.wrappedType)
    } else if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
      self = .optional(wrapped: optional.wrappedType)
    } else if let array = type.as(ArrayTypeSyntax.self) {
      self = .array(element: array.element)
    } else if let identifier = type.as(IdentifierTypeSyntax.self) {
      self = Self(named: identifier.name.text, generics: identifier.genericArgumentClause)
    } else if let member = type.as(MemberTypeSyntax.self) {
      // `Swift.Int`, `Foundation.Date`: the standard names; `Outer.Inner`: a type of the program's own.
      let base = member.baseType.as(IdentifierTypeSyntax.self)
      if let base, base.genericArgumentClause == nil, ["Swift", "Foundation"].contains(base.name.text) {
        self = Self(named: member.name.text, generics: member.genericArgumentClause)
      } else {
        self = .named
      }
    } else {
      self = .unsupported
    }
  }

  private init(named name: String, generics: GenericArgumentClauseSyntax?) {
    if let generics {
      let arguments = generics.arguments.map(\.argument)
      if arguments.count == 1, case .type(let argument) = arguments[0], name == "Optional" || name == "Array" {
        self = name == "Optional" ? .optional(wrapped: argument) : .array(element: argument)
      } else {
        self = Self.unsupportedNames.contains(name) ? .unsupported : .named
      }
    } else if let scalar = Self.scalars[name] {
      self = .scalar(scalar)
    } else {
      self = Self.unsupportedNames.contains(name) ? .unsupported : .named
    }
  }

  /// The wrapped type of an optional, else nil.
  var wrapped: TypeSyntax? {
    if case .optional(let wrapped) = self { return wrapped }
    return nil
  }
}

/// Why a property's type cannot be described.
enum TypeProblem {
  /// This part of the type has no schema.
  case unsupported(TypeSyntax)
  /// An optional that is not the property's own type.
  case nestedOptional(TypeSyntax)
  /// The type being derived itself (or `Self`), whose schema would contain itself without end.
  case recursive(TypeSyntax)
}

extension TypeSyntax {
  /// Whether the type is optional, in any of its spellings (`T?`, `T!`, `Optional<T>`).
  var isOptional: Bool { TypeShape(self).wrapped != nil }

  /// The type as generated code names it for the schema and `GeneratedContent.value(_:forProperty:)`: `T?` for
  /// every optional spelling, else as written.
  var generatedValueType: String {
    if let wrapped = TypeShape(self).wrapped { return "\(wrapped.withoutParentheses.trimmedDescription)?" }
    return trimmedDescription
  }

  /// The type without redundant parentheses: `(String)` is `String`.
  var withoutParentheses: TypeSyntax {
    if let tuple = self.as(TupleTypeSyntax.self), tuple.elements.count == 1, let only = tuple.elements.first,
      only.firstName == nil, only.secondName == nil, only.ellipsis == nil, only.inoutKeyword == nil
    {
      return only.type.withoutParentheses
    }
    return self
  }

  /// The first part of the type that `@Generable` cannot describe inside the type called `typeName`, if any: a part
  /// without schema, an optional inside an array or an optional, or the type itself (a schema is written out whole,
  /// so a recursive type has none).
  func generationProblem(inside typeName: String) -> TypeProblem? {
    for token in tokens(viewMode: .sourceAccurate)
    where token.tokenKind == .keyword(.Self) || token.text.withoutBackticks == typeName {
      // The name as a type of its own (`Tree`, `[Tree]`, `Tree?`), not as the scope of a nested type (`Tree.Kind`).
      guard let named = token.parent?.as(IdentifierTypeSyntax.self) else { continue }
      if let member = named.parent?.as(MemberTypeSyntax.self), member.baseType.id == named.id { continue }
      return .recursive(self)
    }
    return generationProblem()
  }

  /// The first part of the type that `@Generable` cannot describe, if any; `isPropertyType` allows one optional.
  func generationProblem(isPropertyType: Bool = true) -> TypeProblem? {
    switch TypeShape(self) {
    case .scalar, .named:
      return nil
    case .unsupported:
      return .unsupported(self)
    case .array(let element):
      return element.generationProblem(isPropertyType: false)
    case .optional(let wrapped):
      guard isPropertyType else { return .nestedOptional(self) }
      return wrapped.generationProblem(isPropertyType: false)
    }
  }
}
