// The prompt set both tool-calling evals score against.
import ToolhostJSON

/// One evaluation prompt: the tool that should be called (or none) and arguments the call must have.
struct EvalCase {
  var prompt: String
  var tool: String?
  /// Argument name → what its value must be (numbers compared as numbers, strings case-insensitively as a
  /// substring, an array as alternatives).
  var expect: [String: JSONValue] = [:]
}

/// The prompts of both tool-calling evals (`toolcalls`, first turn only; `ask`, end to end): every example tool,
/// and questions that need none. A city may be named in its local spelling, as `getWeather` accepts. In `ask`, the
/// scratch to-do list holds three items (1 buy milk, 2 call the dentist, 3 water the plants) before each prompt.
let everydayPrompts: [EvalCase] = [
  // getWeather (8)
  EvalCase(prompt: "What's the weather like in Boston right now?", tool: "getWeather", expect: ["city": "Boston"]),
  EvalCase(prompt: "Tell me the temperature in Tokyo.", tool: "getWeather", expect: ["city": "Tokyo"]),
  EvalCase(prompt: "How warm is Rome in July?", tool: "getWeather", expect: ["city": "Rome", "month": 7]),
  EvalCase(
    prompt: "Does it rain a lot in London in November?", tool: "getWeather", expect: ["city": "London", "month": 11]),
  EvalCase(prompt: "Will I need a coat in Oslo in January?", tool: "getWeather", expect: ["city": "Oslo", "month": 1]),
  EvalCase(
    prompt: "What is Lisbon usually like in April, in Fahrenheit?", tool: "getWeather",
    expect: ["city": ["Lisbon", "Lisboa"], "month": 4, "units": "fahrenheit"]),
  EvalCase(
    prompt: "How cold does Chicago get in February?", tool: "getWeather", expect: ["city": "Chicago", "month": 2]),
  EvalCase(
    prompt: "What's the weather in Sydney in December?", tool: "getWeather", expect: ["city": "Sydney", "month": 12]),
  // searchBreadDatabase (4)
  EvalCase(prompt: "Find me a recipe for rye bread.", tool: "searchBreadDatabase", expect: ["searchTerm": "rye"]),
  EvalCase(prompt: "Do you have a sourdough recipe?", tool: "searchBreadDatabase", expect: ["searchTerm": "sourdough"]),
  EvalCase(
    prompt: "Show me two flatbread recipes.", tool: "searchBreadDatabase",
    expect: ["searchTerm": "flatbread", "limit": 2]),
  EvalCase(prompt: "How do I bake a baguette?", tool: "searchBreadDatabase", expect: ["searchTerm": "baguette"]),
  // the to-do tools (7)
  EvalCase(prompt: "Add 'buy eggs' to my to-do list.", tool: "todoAdd", expect: ["text": "eggs"]),
  EvalCase(prompt: "Remind me to pay the rent: put it on my to-do list.", tool: "todoAdd", expect: ["text": "rent"]),
  EvalCase(prompt: "What's on my to-do list?", tool: "todoList"),
  EvalCase(prompt: "Show me my open to-dos.", tool: "todoList"),
  EvalCase(prompt: "I finished to-do item 3, mark it as done.", tool: "todoDone", expect: ["id": 3]),
  EvalCase(prompt: "Delete item 2 from my to-do list for good.", tool: "todoRemove", expect: ["id": 2]),
  EvalCase(prompt: "Clear my whole to-do list.", tool: "todoClear", expect: ["onlyDone": false]),
  // convertUnits (5)
  EvalCase(
    prompt: "Convert 5 miles to kilometers.", tool: "convertUnits",
    expect: ["value": 5, "from": "mi", "to": ["km", "kilomet"]]),
  EvalCase(
    prompt: "How many pounds is 70 kg?", tool: "convertUnits",
    expect: ["value": 70, "from": ["kg", "kilogram"], "to": ["lb", "pound"]]),
  EvalCase(
    prompt: "What is 100 degrees Fahrenheit in Celsius?", tool: "convertUnits",
    expect: ["value": 100, "from": "f", "to": "c"]),
  EvalCase(
    prompt: "How many cups are in 2 liters?", tool: "convertUnits",
    expect: ["value": 2, "from": "l", "to": "cup"]),
  EvalCase(prompt: "Convert 3 feet to meters.", tool: "convertUnits", expect: ["value": 3, "from": "f", "to": "m"]),
  // describeData (4)
  EvalCase(prompt: "What are the mean and median of 3, 5, 8 and 13?", tool: "describeData"),
  EvalCase(prompt: "Compute the standard deviation of 10, 20, 30, 40.", tool: "describeData"),
  EvalCase(prompt: "What's the average of 4, 8, 15, 16, 23 and 42?", tool: "describeData"),
  EvalCase(prompt: "Give me summary statistics for 2.5, 3.5, 1.0 and 7.25.", tool: "describeData"),
  // the time MCP server's tools (3)
  EvalCase(prompt: "What time is it in Tokyo right now?", tool: "get_current_time", expect: ["timezone": "Tokyo"]),
  EvalCase(
    prompt: "What's the current time in New York?", tool: "get_current_time", expect: ["timezone": "New_York"]),
  EvalCase(
    prompt: "If it is 14:00 in London, what time is it in New York?", tool: "convert_time",
    expect: ["time": "14:00", "source_timezone": "London", "target_timezone": ["New_York", "New York"]]),
  // no tool (10)
  EvalCase(prompt: "What is 2+2?", tool: nil),
  EvalCase(prompt: "Say hello in French.", tool: nil),
  EvalCase(prompt: "Write a haiku about the sea.", tool: nil),
  EvalCase(prompt: "What is the capital of Italy?", tool: nil),
  EvalCase(prompt: "Who wrote Hamlet?", tool: nil),
  EvalCase(prompt: "Translate 'thank you' into Spanish.", tool: nil),
  EvalCase(prompt: "Thanks, that's all!", tool: nil),
  EvalCase(prompt: "Tell me a fun fact about bread.", tool: nil),
  EvalCase(prompt: "What does a to-do list app do, in one sentence?", tool: nil),
  EvalCase(prompt: "In one sentence, why do recipes use grams instead of cups?", tool: nil),
]
