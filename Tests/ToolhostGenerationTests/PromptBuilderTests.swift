import Testing
import ToolhostGeneration
import ToolhostJSON

/// What `Prompt`, `Instructions` and their builders put together.
struct PromptBuilderTests {
  struct Unreachable: Error, CustomStringConvertible {
    var description: String { "the service did not answer" }
  }

  @Test func aPromptKeepsTextAndStructuresInOrder() {
    let sight = Sight(name: "Belém Tower", hours: 1)
    let cities = ["Lisbon", "Porto"]
    let rainy = false
    let missing: Sight? = nil
    let prompt = Prompt {
      "Plan a day."
      cities
      if rainy { "Prefer indoor places." }
      sight
      Season.summer
      missing
    }
    #expect(
      prompt.parts == [
        .text("Plan a day."), .text("Lisbon"), .text("Porto"), .structure(sight.generatedContent), .text("summer"),
        .structure(GeneratedContent(kind: .null)),
      ])
    #expect(prompt.text == "Plan a day.\nLisbon\nPorto\n" + #"{"name":"Belém Tower","hours":1}"# + "\nsummer\nnull")
    #expect(Prompt(prompt) == prompt)
    #expect(Prompt("x").parts == [.text("x")])
  }

  @Test func aResultIsItsSuccessOrAnErrorValue() {
    let ok: Result<String, Unreachable> = .success("sunny")
    let failed: Result<String, Unreachable> = .failure(Unreachable())
    #expect(ok.promptRepresentation.parts == [.text("sunny")])
    #expect(failed.promptRepresentation.text == #"{"error":"the service did not answer"}"#)
  }

  @Test func instructionsAreLinesAndLeaveOutWhatWasNotTaken() {
    let brief = false
    let rules = ["Cite the tool.", "Never guess."]
    let instructions = Instructions {
      "You plan trips."
      if brief { "One sentence." }
      for rule in rules { rule }
      if brief { "Short." } else { "Explain your plan." }
      Sight(name: "Sé", hours: 2)
    }
    #expect(
      instructions.text
        == "You plan trips.\nCite the tool.\nNever guess.\nExplain your plan.\n" + #"{"name":"Sé","hours":2}"#)
    #expect(Instructions(rules).text == "Cite the tool.\nNever guess.")
    #expect(Instructions("as it is").text == "as it is")
  }
}
