import Testing

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

/// Names over toolhost's 64-character limit: cut, with a hash of the whole so that they stay apart and stable.
@Suite struct ToolNameTests {
  @Test func aNameThatFitsIsKept() {
    #expect(ToolName.fitted("getWeather") == "getWeather")
    let sixtyFour = String(repeating: "a", count: 64)
    #expect(ToolName.fitted(sixtyFour) == sixtyFour)
  }

  @Test func aLongNameIsCutWithAStableHashOfTheWhole() {
    let common = String(repeating: "x", count: 62)
    let one = ToolName.fitted(common + "_one")
    let two = ToolName.fitted(common + "_two")
    #expect(one.count == 64 && two.count == 64)
    #expect(one != two)
    #expect(one.hasPrefix(String(repeating: "x", count: 55) + "-"))
    #expect(one.suffix(8).allSatisfy { $0.isHexDigit })
    // The same name always gets the same short form (FNV-1a, not Swift's per-process seeded hash).
    #expect(ToolName.fitted(common + "_one") == one)
    #expect(ToolName.fitted(String(repeating: "a", count: 65)) == String(repeating: "a", count: 55) + "-2dd603ec")
  }
}
