// swift-format-ignore-file
// "Generating Swift data structures with guided generation", the Generable and GenerationGuide pages and "Managing
// the context window" (FoundationModels 27 documentation), their samples as the pages show them with
// `import FoundationModels` changed to `import Toolhost`. The pages have no sample of `.anyOf` in `@Guide` or of a
// guide on an optional property; `Listing` below writes them as their signatures allow.

import Foundation
import Toolhost

@Generable
struct SearchSuggestions {
    @Guide(description: "A list of suggested search terms.", .count(4))
    var searchTerms: [SearchTerm]
    @Generable
    struct SearchTerm {
        // Use a generation identifier for data structures the framework generates.
        var id: GenerationID
        @Guide(description: "A two- or three- word search term, like 'Beautiful sunsets'.")
        var searchTerm: String
    }
}

@Generable(description: "Basic profile information about a cat")
struct CatProfile {
    // A guide isn't necessary for basic fields.
    var name: String

    @Guide(description: "The age of the cat", .range(0...20))
    var age: Int

    @Guide(description: "A one sentence profile about the cat's personality")
    var profile: String
}

func menuSchema() -> DynamicGenerationSchema {
    // Create the dynamic schema at runtime.
    let menuSchema = DynamicGenerationSchema(
        name: "Menu",
        properties: [
            DynamicGenerationSchema.Property(
                name: "dailySoup",
                schema: DynamicGenerationSchema(
                    name: "dailySoup",
                    anyOf: ["Tomato", "Chicken Noodle", "Clam Chowder"]
                )
            )

            // Add additional properties.
        ]
    )
    return menuSchema
}

@Generable
struct ShopItem {
    @Guide(description: "A creative name for an item sold in a fantasy RPG")
    var name: String

    @Guide(description: "A cost for the item", .range(0.25...1000))
    var cost: Decimal
}

@Generable
struct Shop {
    @Guide(description: "A creative name for a shop in a fantasy RPG")
    var name: String

    @Guide(description: "A list of items for sale", .count(3))
    var inventory: [ShopItem]
}

@Generable
struct FortuneCookie {
    @Guide(description: "A fortune from a fortune cookie")
    var name: String

    @Guide(description: "A list lucky numbers", .element(.range(0...9)), .count(4))
    var luckyNumbers: [Int]
}

@Generable 
struct GameSettings {
    @Guide(.minimumCount(1), .maximumCount(20))
    @Guide(description: "Keyboard shortcuts for desktop")
    var keyboardShortcuts: [String]
}

/// `.anyOf` and `.range` on optional properties, as the guides' signatures allow.
@Generable(description: "A listing of a flat to rent")
struct Listing {
    @Guide(description: "The neighbourhood's kind", .anyOf(["central", "suburban", "rural"]))
    var area: String?

    @Guide(description: "The number of bedrooms", .range(1...6))
    var bedrooms: Int?

    @Guide(description: "A rating out of five", .range(0.0...5.0))
    var rating: Double?
}

/// The prompt builder with `respond` and `streamResponse`, snapshots and `collect()`.
func streamAListing() async throws -> Listing {
    let session = LanguageModelSession()
    let title = try await session.respond {
        "Write a title for a listing of a flat to rent."
        "Use at most eight words."
    }
    print("title: \(title.content)")

    let stream = session.streamResponse(generating: Listing.self) {
        "Describe a two-bedroom flat near the centre, rated 4 out of 5."
    }
    for try await snapshot in stream {
        print("so far: \(snapshot.content)")
    }
    let response = try await stream.collect()
    return response.content
}
