import Foundation
import Testing
import ToolhostGeneration
import ToolhostJSON

/// An item whose price is a `Decimal` with a guide, identified by a `GenerationID` the model does not write.
@Generable
struct PricedItem {
  var id: GenerationID
  @Guide(description: "The price", .range(0.25...1000))
  var price: Decimal
  var note: String?
}

/// `Decimal` values and `GenerationID` properties in `@Generable` types (FoundationModels 27's samples use both).
struct DecimalAndIdentityTests {
  @Test func aDecimalIsANumberWithItsGuidesAndTheIdentityIsNotInTheSchema() throws {
    let schema = PricedItem.generationSchema.jsonSchema
    #expect(schema["properties"]?["price"]?["type"] == "number")
    #expect(schema["properties"]?["price"]?["minimum"] == .real(0.25))
    #expect(schema["properties"]?["price"]?["maximum"] == .integer(1000))
    #expect(schema["properties"]?["id"] == nil)
    #expect(schema["required"] == ["price"])
  }

  @Test func aDecimalKeepsItsDecimalDigitsAndTheIdentityComesFromTheContent() throws {
    var content = try GeneratedContent(json: #"{"price": 0.1}"#)
    let identity = GenerationID()
    content.id = identity
    let item = try PricedItem(content)
    #expect(item.price == Decimal(string: "0.1"))
    #expect(item.id == identity)
    #expect(item.generatedContent.jsonString == #"{"price":0.1}"#)
    // Without one in the content, each value gets its own.
    let first = try PricedItem(GeneratedContent(json: #"{"price": 2}"#))
    let second = try PricedItem(GeneratedContent(json: #"{"price": 2}"#))
    #expect(first.id != second.id)
  }

  @Test func aDecimalReadsExponentsAndLongFigures() throws {
    #expect(try PricedItem(GeneratedContent(json: #"{"price": 1e-7}"#)).price == Decimal(string: "0.0000001"))
    #expect(try PricedItem(GeneratedContent(json: #"{"price": 12345678.9}"#)).price == Decimal(string: "12345678.9"))
  }

  @Test func aDecimalIsNotAString() throws {
    #expect(throws: GeneratedContentError.self) { try PricedItem(GeneratedContent(json: #"{"price": "cheap"}"#)) }
  }
}

/// A type whose schema has a name of its own.
@Generable(name: "Recipe", description: "A bread recipe")
struct BreadRecipeCard {
  var title: String
}

/// An enum with one too.
@Generable(name: "Crust")
enum CrustKind {
  case soft, crisp
}

/// `@Generable(name:description:)` (FoundationModels 27).
struct GenerableNameTests {
  @Test func theNameIsTheSchemasTitleAndName() throws {
    #expect(BreadRecipeCard.generationSchema.name == "Recipe")
    #expect(BreadRecipeCard.generationSchema.jsonSchema["title"] == "Recipe")
    #expect(BreadRecipeCard.generationSchema.jsonSchema["description"] == "A bread recipe")
    #expect(CrustKind.generationSchema.name == "Crust")
    #expect(CrustKind.generationSchema.jsonSchema["title"] == "Crust")
    #expect(try BreadRecipeCard(GeneratedContent(json: #"{"title": "Rye"}"#)).title == "Rye")
  }
}
